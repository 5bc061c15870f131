// nsel recover's pass over a folder, driven without the nsel binary: each file's fate told as it
// is done, and the outcome's counts and exit code.
#include "nsel/workflow/recover_reports.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "nsel/core/manifest.hpp"
#include "nsel/sys/host.hpp"
#include "sample_manifest.hpp"
#include "unit_files.hpp"

namespace fs = std::filesystem;

namespace {

struct Told {
  std::vector<std::pair<std::string, std::string>> files;  // file name, message
  nsel::RecoverOutcome outcome;
};

Told recover(const fs::path& root) {
  Told told;
  nsel::RecoverRequest request;
  request.roots = {root};
  told.outcome = nsel::recover_reports(
      request,
      [&](const fs::path& file, const std::string& message) {
        told.files.emplace_back(file.filename().string(), message);
      },
      [&](const fs::path& qdstrm, const std::string& problem) {
        told.files.emplace_back(qdstrm.filename().string(), "no importer: " + problem);
      });
  return told;
}

// A report left hidden because every name was taken (name_taken): told as left while no name is
// free (exit 1), never named when the file under the hidden name is another user's, then named,
// the manifest moved beside it; an empty folder is nothing to do.
TEST(RecoverReports, AReportLeftHiddenIsToldLeftThenNamedOnceANameFrees) {
  const fs::path dir = nsel::test::fresh_dir("recover-reports", "name-taken");
  Told told = recover(dir);
  EXPECT_TRUE(told.files.empty());
  EXPECT_EQ(told.outcome.qdstrm_files, 0u);
  EXPECT_FALSE(told.outcome.named_any);
  EXPECT_EQ(told.outcome.exit_code(), 0);

  nsel::Manifest m = nsel::test::window_manifest();
  m.pid = 4242;
  m.nsel_pid = 999999;
  m.host = nsel::host_name();
  m.command = {"nsys", "profile", "-o", (dir / ".w_%p.nsel7-0a1b").string(), "prog"};
  m.report = (dir / ".w_4242.nsel7-0a1b.nsys-rep").string();
  m.start_time = "2026-12-07T05:00:00.000Z";
  m.end_time = "2026-12-07T05:01:00.000Z";
  m.exit_status = 0;
  m.state = "name_taken";
  const fs::path pending = dir / ".w-pending-999999-0a1b2c3d.nsel.json";
  std::ofstream(pending) << nsel::serialize_manifest(m);
  std::ofstream(m.report) << std::string(4096, 'r');
  for (int k = 1; k <= nsel::kReportNameVariants; ++k) {
    std::ofstream(nsel::report_name_variant(dir / "w_4242.nsys-rep", k)) << "another's";
  }
  told = recover(dir);
  ASSERT_EQ(told.files.size(), 1u);
  EXPECT_EQ(told.files[0].first, ".w_4242.nsel7-0a1b.nsys-rep");
  EXPECT_EQ(told.files[0].second,
            "left as is: every name it may take (w_4242.nsys-rep and its -2 to -99 variants) is "
            "still another file's");
  EXPECT_TRUE(told.outcome.named_any);
  EXPECT_EQ(told.outcome.names_failed, 1);
  EXPECT_EQ(told.outcome.exit_code(), 1);

  fs::remove(dir / "w_4242.nsys-rep");
  if (::geteuid() == 0) {
    // Another user's file under the hidden name is never named as this run's report.
    ASSERT_EQ(::chown(m.report.c_str(), 65534, 65534), 0);
    told = recover(dir);
    ASSERT_EQ(told.files.size(), 1u);
    EXPECT_EQ(told.files[0].second, "left as is: the report it names, '" + m.report +
                                        "', is another user's (uid 65534): not named");
    EXPECT_EQ(told.outcome.exit_code(), 1);
    EXPECT_FALSE(fs::exists(dir / "w_4242.nsys-rep"));
    ASSERT_EQ(::chown(m.report.c_str(), 0, 0), 0);
  }
  told = recover(dir);
  ASSERT_EQ(told.files.size(), 1u);
  EXPECT_EQ(told.files[0].second, "named " + (dir / "w_4242.nsys-rep").string());
  EXPECT_EQ(told.outcome.exit_code(), 0);
  EXPECT_EQ(fs::file_size(dir / "w_4242.nsys-rep"), 4096u);
  EXPECT_FALSE(fs::exists(pending));
  EXPECT_TRUE(fs::exists(dir / "w_4242.nsel.json"));
  fs::remove_all(dir);
}

}  // namespace
