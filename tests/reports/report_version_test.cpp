// The version that wrote a report, read from the real GPU captures in ../shared/gpu-reports
// (every header layout: 2020.5 and 2021.3 .qdrep, 2022.2 and 2022.4 "Report 1", 2023.2.3 still
// "Report 1", 2023.4.4 "2023@4@4@54"). Skipped where that folder is absent.
#include "nsel/reports/report_version.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {

const fs::path kShared = fs::path(NSEL_SOURCE_DIR) / "../shared/gpu-reports";

TEST(ReportVersion, ReadsTheWriterOfEveryRealCapture) {
  if (!fs::is_directory(kShared)) GTEST_SKIP() << kShared << " is absent (real GPU captures)";
  const std::pair<const char*, const char*> expected[] = {
      {"gpubootcamp-jacobi-mpi/report1.qdrep", "2020.5.1.85-5ee086b"},
      {"nersc-sc22-ddp/4gpu_baseline_sc21.qdrep", "2021.3.2.4-027534f"},
      {"ai-profiler-mnist/baseline_nvtx.nsys-rep", "2022.2.1.31-5fe97ab"},
      {"nersc-sc22-ddp/4gpu_baseline.nsys-rep", "2022.4.2.1-df9881f"},
      {"nersc-sc22-ddp/4gpu_bucketcap100mb.nsys-rep", "2022.4.2.1-df9881f"},
      // Old header layout, yet 2022.4 cannot read it: only the version says so.
      {"nersc-sc23-vit/dali_amp_bf16_fused_jit.nsys-rep", "2023.2.3.1001-32894139v0"},
      {"alcf-seqpar-2node/lineprofiling_seq_parallel_fp32-ranks8-nodes2-T1_0.nsys-rep",
       "2023.4.4.54-234433681190v0"},
  };
  for (const auto& [file, version] : expected) {
    const auto found = nsel::report_writer_version(kShared / file);
    ASSERT_TRUE(found) << file;
    EXPECT_EQ(found->text, version) << file;
  }
  for (const char* n : {"2", "3", "4", "6"}) {
    const auto found = nsel::report_writer_version(kShared / "gpubootcamp-jacobi-mpi" /
                                                   ("report" + std::string(n) + ".qdrep"));
    ASSERT_TRUE(found) << n;
    EXPECT_EQ(found->release_text(), "2020.5.1");
  }
}

TEST(ReportVersion, NothingForFilesThatAreNoReport) {
  const fs::path dir =
      fs::temp_directory_path() / ("nsel-report-version-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "empty.nsys-rep").close();
  std::ofstream(dir / "text.nsys-rep") << "not a report 2023.4.4.54-x\n";
  EXPECT_FALSE(nsel::report_writer_version(dir / "empty.nsys-rep"));
  EXPECT_FALSE(nsel::report_writer_version(dir / "text.nsys-rep"));
  EXPECT_FALSE(nsel::report_writer_version(dir / "missing.nsys-rep"));
  if (fs::is_directory(kShared)) {
    // An SQLite export is no report.
    EXPECT_FALSE(
        nsel::report_writer_version(kShared / "pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"));
  }
  fs::remove_all(dir);
}

}  // namespace
