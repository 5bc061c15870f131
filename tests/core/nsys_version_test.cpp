// Nsight Systems versions: parsing every form they come in, what each generation needs, who
// reads what, and which install is chosen for a file.
#include "nsel/core/nsys_version.hpp"

#include <gtest/gtest.h>

namespace {

nsel::NsysVersion v(const std::string& text) {
  const auto parsed = nsel::parse_nsys_version(text);
  EXPECT_TRUE(parsed) << text;
  return parsed.value_or(nsel::NsysVersion{});
}

nsel::NsysInstall install(const std::string& version, const std::string& path,
                          const std::string& origin = "known location") {
  return {path, v(version), origin};
}

TEST(NsysVersion, ParsesNsysVersionOutputOfBothGenerations) {
  const auto old = v("NVIDIA Nsight Systems version 2022.4.2.1-df9881f\n");
  EXPECT_EQ(old.year, 2022);
  EXPECT_EQ(old.release, 4);
  EXPECT_EQ(old.patch, 2);
  EXPECT_EQ(old.build, 1);
  EXPECT_EQ(old.text, "2022.4.2.1-df9881f");
  EXPECT_EQ(old.release_text(), "2022.4.2");
  const auto now = v("NVIDIA Nsight Systems version 2023.4.4.54-234433681190v0");
  EXPECT_EQ(now.text, "2023.4.4.54-234433681190v0");
  EXPECT_EQ(now.build, 54);
}

TEST(NsysVersion, ParsesReportHeaderAndBareForms) {
  // A report header from 2023.3 on writes '@' between the numbers.
  const auto header = v("2023@4@4@54-234433681190v0");
  EXPECT_EQ(header.text, "2023.4.4.54-234433681190v0");
  EXPECT_EQ(header.release_text(), "2023.4.4");
  EXPECT_EQ(v("2023.2.3.1001-32894139v0").build, 1001);
  EXPECT_EQ(v("2023.4").release_text(), "2023.4.0");
  // TargetInstallDir of an export.
  EXPECT_EQ(v("/usr/local/cuda-12.2/NsightSystems-cli-2023.2.3/target-linux-x64").text, "2023.2.3");
}

TEST(NsysVersion, RejectsWhatIsNoVersion) {
  for (const char* text : {"", "nsys", "1.0", "2023-09-26T23:29:08", "12.2.0.5", "20231.4", "2023@",
                           "2023.13.1", "/usr/lib/nsight-systems/target-linux-x64"}) {
    EXPECT_FALSE(nsel::parse_nsys_version(text)) << text;
  }
}

TEST(NsysVersion, ComparesByNumbersNotText) {
  EXPECT_LT(nsel::compare_versions(v("2022.4.2.1"), v("2023.4.4.54")), 0);
  EXPECT_LT(nsel::compare_versions(v("2023.4.4.9"), v("2023.4.4.54")), 0);
  EXPECT_EQ(nsel::compare_versions(v("2023.4.4.54-a"), v("2023.4.4.54-b")), 0);
  EXPECT_TRUE(nsel::same_release(v("2022.4.2.1-df9881f"), v("2022.4.2.7")));
  EXPECT_FALSE(nsel::same_release(v("2022.4.2"), v("2022.4.3")));
}

TEST(NsysBehaviour, EachGenerationGetsItsOwnNamesAndWorkarounds) {
  const auto old = nsel::nsys_behaviour(v("2022.4.2.1-df9881f"));
  EXPECT_EQ(old.nvtx_pushpop_report, "nvtxppsum");
  EXPECT_EQ(old.kernel_report, "gpukernsum");
  EXPECT_EQ(old.kernel_grid_report, "");
  EXPECT_EQ(old.osrt_report, "osrtsum");
  EXPECT_FALSE(old.export_tables);
  EXPECT_EQ(old.export_metadata_table, "EXPORT_META_DATA");
  EXPECT_TRUE(old.context_switch_hang);
  EXPECT_TRUE(old.stop_collection_before_signal);
  EXPECT_TRUE(old.nvtx_register_only_off);
  EXPECT_EQ(old.quiet_options, (std::vector<std::string>{"--quiet", "true"}));

  const auto now = nsel::nsys_behaviour(v("2023.4.4.54-234433681190v0"));
  EXPECT_EQ(now.nvtx_pushpop_report, "nvtx_pushpop_sum");
  EXPECT_EQ(now.kernel_report, "cuda_gpu_kern_sum");
  EXPECT_EQ(now.kernel_grid_report, "cuda_gpu_kern_gb_sum");
  EXPECT_EQ(now.osrt_report, "osrt_sum");
  EXPECT_TRUE(now.export_tables);
  EXPECT_EQ(now.export_metadata_table, "META_DATA_EXPORT");
  EXPECT_FALSE(now.context_switch_hang);
  EXPECT_TRUE(now.stop_collection_before_signal);
  EXPECT_TRUE(now.nvtx_register_only_off);
  EXPECT_EQ(now.quiet_options, old.quiet_options);
  // Between the two measured generations: 2022.4's behaviour, which 2023.4 accepts too.
  EXPECT_EQ(nsel::nsys_behaviour(v("2023.2.3")).nvtx_pushpop_report, "nvtxppsum");
}

TEST(NsysReaders, ReadUpToTheirOwnVersionAndImportOnlyTheirOwn) {
  // As measured: 2023.4 read 2020.5 to 2023.4 and refused 2026.1; 2022.4 refused 2023.2.
  EXPECT_TRUE(nsel::can_read_report(v("2023.4.4.54"), v("2020.5.1.85")));
  EXPECT_TRUE(nsel::can_read_report(v("2023.4.4.54"), v("2023.4.4.54")));
  EXPECT_FALSE(nsel::can_read_report(v("2023.4.4.54"), v("2026.1.2")));
  EXPECT_FALSE(nsel::can_read_report(v("2022.4.2.1"), v("2023.2.3.1001")));
  EXPECT_TRUE(nsel::can_read_report(v("2022.4.2.1"), v("2022.4.2.1")));
  EXPECT_TRUE(nsel::can_import_qdstrm(v("2022.4.2.1"), v("2022.4.2.1-df9881f")));
  EXPECT_FALSE(nsel::can_import_qdstrm(v("2023.4.4.54"), v("2022.4.2.1")));
}

TEST(ChooseNsys, TheFirstInstallWhenItCanElseTheOldestThatCan) {
  const std::vector<nsel::NsysInstall> path_2022 = {
      install("2022.4.2.1", "/usr/bin/nsys", "PATH"),
      install("2024.1.1.1", "/opt/nvidia/nsight-systems/2024.1.1/bin/nsys"),
      install("2023.4.4.54", "/opt/nsight-systems-2023.4/usr/bin/nsys")};
  using nsel::NsysFileKind;
  EXPECT_EQ(nsel::choose_nsys(path_2022, v("2022.4.2.1"), NsysFileKind::report), 0u);
  EXPECT_EQ(nsel::choose_nsys(path_2022, v("2020.5.1.85"), NsysFileKind::report), 0u);
  EXPECT_EQ(nsel::choose_nsys(path_2022, v("2023.2.3.1001"), NsysFileKind::report), 2u);
  EXPECT_EQ(nsel::choose_nsys(path_2022, v("2023.4.4.54"), NsysFileKind::report), 2u);
  EXPECT_EQ(nsel::choose_nsys(path_2022, v("2024.1.1.1"), NsysFileKind::report), 1u);
  EXPECT_EQ(nsel::choose_nsys(path_2022, v("2026.1.2"), NsysFileKind::report), std::nullopt);
  // Unknown writer: what the user put first.
  EXPECT_EQ(nsel::choose_nsys(path_2022, std::nullopt, NsysFileKind::report), 0u);
  EXPECT_EQ(nsel::choose_nsys({}, std::nullopt, NsysFileKind::report), std::nullopt);
  // A .qdstrm: only its writer's release.
  EXPECT_EQ(nsel::choose_nsys(path_2022, v("2023.4.4.54"), NsysFileKind::qdstrm), 2u);
  EXPECT_EQ(nsel::choose_nsys(path_2022, v("2022.4.2.1"), NsysFileKind::qdstrm), 0u);
  EXPECT_EQ(nsel::choose_nsys(path_2022, v("2023.2.3"), NsysFileKind::qdstrm), std::nullopt);
}

TEST(ChooseNsys, NoInstallCanSaysSoInOneLine) {
  const std::vector<nsel::NsysInstall> only_2022 = {
      install("2022.4.2.1-df9881f", "/usr/bin/nsys", "NSEL_NSYS")};
  EXPECT_EQ(nsel::no_nsys_for("'a.nsys-rep'", v("2023@4@4@54-234433681190v0"),
                              nsel::NsysFileKind::report, only_2022),
            "'a.nsys-rep': written by Nsight Systems 2023.4.4.54-234433681190v0, needs Nsight "
            "Systems 2023.4.4 or newer; found: 2022.4.2 (/usr/bin/nsys); install such a version "
            "and set NSEL_NSYS=<its nsys> (a path, or several separated by ':')");
  EXPECT_EQ(
      nsel::no_nsys_for("'q.qdstrm'", v("2022.4.2.1-df9881f"), nsel::NsysFileKind::qdstrm, {}),
      "'q.qdstrm': written by Nsight Systems 2022.4.2.1-df9881f, needs the importer of "
      "Nsight Systems 2022.4.2; found: none; install such a version and set "
      "NSEL_NSYS=<its nsys> (a path, or several separated by ':')");
}

}  // namespace
