// The verdict rules of nsel check on what a report holds (judge_report), each decided from a
// manifest written as nsel exec writes it; the real runs behind each reason are in
// tests/e2e/check_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nsel/core/manifest.hpp"
#include "nsel/workflow/check_run.hpp"

namespace fs = std::filesystem;
using nsel::HeldSteps;
using nsel::Verdict;

namespace {

// A complete report of window 2:5 whose program ended with `exit_status`.
nsel::FoundReport found_with(const fs::path& dir, int exit_status) {
  nsel::Manifest m;
  m.worker = "dtensor_policy_worker";
  m.step_window = "2:5";
  m.step_start = 2;
  m.step_stop = 5;
  m.pid = 4242;
  m.command = {"nsys", "profile", "--capture-range=nvtx", "train"};
  m.end_time = "2026-12-01T12:00:00.000Z";
  m.exit_status = exit_status;
  m.state = "complete";
  const fs::path manifest = dir / "dtensor_policy_worker_2:5_4242.nsel.json";
  std::ofstream(manifest) << nsel::serialize_manifest(m);
  nsel::FoundReport found;
  found.path = dir / "dtensor_policy_worker_2:5_4242.nsys-rep";
  found.worker = m.worker;
  found.window = "2:5";
  found.pid = m.pid;
  found.state = nsel::ReportState::complete;
  found.manifest = manifest;
  return found;
}

class Judge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nsel-judge-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

}  // namespace

TEST_F(Judge, EveryStepOfTheWindowIsOk) {
  const auto c = nsel::judge_report(found_with(dir_, 0), HeldSteps{{2, 3, 4}, true});
  EXPECT_EQ(c.verdict, Verdict::ok);
  EXPECT_EQ(c.reason, "holds steps 2-4");
  EXPECT_EQ(c.window_steps, (std::vector<long long>{2, 3, 4}));
  // Not opened: the file alone is fine.
  EXPECT_EQ(nsel::judge_report(found_with(dir_, 0)).verdict, Verdict::ok);
}

TEST_F(Judge, LaterStepsMissingAfterASignalWereKilled) {
  const auto c = nsel::judge_report(found_with(dir_, 137), HeldSteps{{2}, true});
  EXPECT_EQ(c.verdict, Verdict::killed_in_window);
  EXPECT_EQ(c.reason, "holds steps 2 of 2-4: killed by SIGKILL (exit status 137) before step 3");
  EXPECT_EQ(nsel::judge_report(found_with(dir_, 143), HeldSteps{{}, false}).verdict,
            Verdict::killed_in_window);
}

TEST_F(Judge, LaterStepsMissingAfterANormalEndWereNotReached) {
  const auto c = nsel::judge_report(found_with(dir_, 0), HeldSteps{{2, 3}, true});
  EXPECT_EQ(c.verdict, Verdict::window_not_reached);
  EXPECT_EQ(c.reason, "holds steps 2-3 of 2-4: the program ended before step 4");
}

TEST_F(Judge, NoNvtxAtAllUnderNvtxCaptureWasLost) {
  const auto lost = nsel::judge_report(found_with(dir_, 0), HeldSteps{{}, false});
  EXPECT_EQ(lost.verdict, Verdict::lost_steps);
  // Other NVTX ranges but no "step <n>": the program does not name its steps; nothing to check.
  const auto unnamed = nsel::judge_report(found_with(dir_, 0), HeldSteps{{}, true});
  EXPECT_EQ(unnamed.verdict, Verdict::ok);
  EXPECT_EQ(unnamed.reason, "holds no NVTX range named 'step <n>': its steps cannot be checked");
}

TEST(RunCheckExit, ZeroOkOneWrongThreePendingOneForNothing) {
  nsel::RunCheck check;
  EXPECT_EQ(check.exit_code(), 1);  // nothing found is not a pass
  nsel::CheckedReport ok;
  check.reports = {ok};
  check.processes = 1;
  EXPECT_EQ(check.exit_code(), 0);
  check.expected = 2;
  EXPECT_EQ(check.exit_code(), 1);
  check.expected.reset();
  nsel::CheckedReport writing;
  writing.verdict = Verdict::writing;
  check.reports.push_back(writing);
  EXPECT_EQ(check.exit_code(), 3);
  nsel::CheckedReport empty;
  empty.verdict = Verdict::empty;
  check.reports.push_back(empty);
  EXPECT_EQ(check.exit_code(), 1);
}
