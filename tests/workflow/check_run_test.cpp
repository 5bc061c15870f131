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
  found.manifest_content = m;  // as discovery reads it
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
  const auto c = nsel::judge_report(found_with(dir_, 0), HeldSteps{{2, 3, 4}, true, {}});
  EXPECT_EQ(c.verdict, Verdict::ok);
  EXPECT_EQ(c.reason, "holds steps 2-4");
  EXPECT_EQ(c.window_steps, (std::vector<long long>{2, 3, 4}));
  // Not opened: the file alone is fine.
  EXPECT_EQ(nsel::judge_report(found_with(dir_, 0)).verdict, Verdict::ok);
}

TEST_F(Judge, LaterStepsMissingAfterASignalWereKilled) {
  const auto c = nsel::judge_report(found_with(dir_, 137), HeldSteps{{2}, true, {}});
  EXPECT_EQ(c.verdict, Verdict::killed_in_window);
  EXPECT_EQ(c.reason, "holds steps 2 of 2-4: killed by SIGKILL (exit status 137) before step 3");
  EXPECT_EQ(nsel::judge_report(found_with(dir_, 143), HeldSteps{{}, false, {}}).verdict,
            Verdict::killed_in_window);
}

// nsel ls and check --files-only read no steps: a killed program's report is said killed there
// too (before, ls said "ok complete" where check said killed_in_window).
TEST_F(Judge, AKilledProgramsReportIsSaidKilledWhereItsStepsAreNotRead) {
  const auto c = nsel::judge_report(found_with(dir_, 137));
  EXPECT_EQ(c.verdict, Verdict::ok);  // the file itself is complete
  EXPECT_EQ(c.reason,
            "killed by SIGKILL (exit status 137): whether inside its window only its steps tell "
            "(nsel check reads them)");
  EXPECT_EQ(nsel::judge_report(found_with(dir_, 0)).reason, "");
}

// A window may outlive the job (NRL_NSYS_PROFILE_STEP_RANGE=3:10 with 5 steps): a job that ended
// cleanly after the last step it held is a normal run, and the verdict says where it ended.
TEST_F(Judge, AJobEndingCleanlyInsideItsWindowIsOk) {
  const auto c = nsel::judge_report(found_with(dir_, 0), HeldSteps{{2, 3}, true, {}});
  EXPECT_EQ(c.verdict, Verdict::ok);
  EXPECT_EQ(c.reason,
            "holds steps 2-3 of 2-4: ended cleanly (exit status 0) after step 3, inside its "
            "window 2:5");
}

TEST_F(Judge, AJobFailingOrLosingAStepInsideItsWindowIsNot) {
  const auto failed = nsel::judge_report(found_with(dir_, 1), HeldSteps{{2, 3}, true, {}});
  EXPECT_EQ(failed.verdict, Verdict::window_not_reached);
  EXPECT_EQ(failed.reason,
            "holds steps 2-3 of 2-4: the program failed (exit status 1) before step 4");
  // A step missing before the last one held was lost, not left behind by an early end.
  const auto hole = nsel::judge_report(found_with(dir_, 0), HeldSteps{{2, 4}, true, {}});
  EXPECT_EQ(hole.verdict, Verdict::window_not_reached);
  EXPECT_EQ(hole.reason, "holds steps 2, 4 of 2-4: the program ended before step 3");
}

// A stop inside the window: nsys closed at teardown the step the program was in. That step is
// cut, not held, even when it is the window's last (it was once counted, and the verdict ok).
TEST_F(Judge, AStepCutByAStopIsNamedAndNotHeld) {
  const auto c = nsel::judge_report(found_with(dir_, 130), HeldSteps{{2, 3}, true, {4}});
  EXPECT_EQ(c.verdict, Verdict::killed_in_window);
  EXPECT_EQ(c.reason,
            "holds steps 2-3 of 2-4: killed by SIGINT (exit status 130) in step 4; step 4 was cut "
            "short (left out)");
  EXPECT_EQ(c.cut_steps, (std::vector<long long>{4}));
  const auto first = nsel::judge_report(found_with(dir_, 143), HeldSteps{{}, true, {2}});
  EXPECT_EQ(first.verdict, Verdict::killed_in_window);
  EXPECT_EQ(first.reason,
            "holds no whole step: killed by SIGTERM (exit status 143) inside its window: step 2 "
            "was cut short (left out)");
}

TEST_F(Judge, NoNvtxAtAllUnderNvtxCaptureWasLost) {
  const auto lost = nsel::judge_report(found_with(dir_, 0), HeldSteps{{}, false, {}});
  EXPECT_EQ(lost.verdict, Verdict::lost_steps);
  // Other NVTX ranges but no "step <n>": the program does not name its steps; nothing to check.
  const auto unnamed = nsel::judge_report(found_with(dir_, 0), HeldSteps{{}, true, {}});
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

// A folder that could not be read may hold reports: never OK, even when every report found is.
TEST(RunCheckExit, AnUnreadableFolderIsNeverOk) {
  nsel::RunCheck check;
  check.reports = {nsel::CheckedReport{}};
  check.processes = 1;
  check.notes.push_back({"/r", "/r/x", "stale_session_latest", "a note that changes nothing"});
  EXPECT_EQ(check.exit_code(), 0);
  check.notes.push_back({"/r", "/r/locked", std::string(nsel::kUnreadableFolderNote), "cannot"});
  EXPECT_EQ(check.exit_code(), 1);
  EXPECT_EQ(check.unreadable_folders(), std::vector<std::string>{"/r/locked"});
}

// A numbered report of a repeated capture range (nsys names them "<base>.2.nsys-rep") is
// described by its base's manifest, as its identity is: whether its program was stopped by a
// signal comes from there too. Before, stopped_by_signal looked only at "<base>.2.nsel.json"
// and answered false, so
// `nsel report` counted the step nsys closed at teardown as a whole step.
TEST_F(Judge, ANumberedReportsStopSignalComesFromItsBasesManifest) {
  found_with(dir_, 143);
  const fs::path numbered = dir_ / "dtensor_policy_worker_2:5_4242.2.nsys-rep";
  std::ofstream(numbered) << "report";
  EXPECT_TRUE(nsel::stopped_by_signal(numbered));
  EXPECT_TRUE(nsel::stopped_by_signal(dir_ / "dtensor_policy_worker_2:5_4242.2.sqlite"));
  EXPECT_TRUE(nsel::stopped_by_signal(dir_ / "dtensor_policy_worker_2:5_4242.nsys-rep"));
  found_with(dir_, 0);
  EXPECT_FALSE(nsel::stopped_by_signal(numbered));
  EXPECT_FALSE(nsel::stopped_by_signal(dir_ / "other_2:5_4242.2.nsys-rep"));  // no manifest
}
