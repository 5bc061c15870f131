// nsel check, end to end: the verdict on runs made by real nsys through the real nsel binary
// (workers killed by SIGKILL before and inside their window, a window never reached, a report
// still being written), on real files placed in trees (a .qdstrm left, a 0-byte report), and
// nsel ls showing the same verdicts.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "real_reports.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using nsel::e2e::place;
using nsel::e2e::real_files;
using nsel::e2e::RealFiles;
using nsel::e2e::Reports;
using nsel::test::make_temp_dir;
using nsel::test::read_description;
using nsel::test::run;
using nsel::test::slurp;
using nsel::test::spit;

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kWorker = NSEL_WORKER_BINARY;

json check_json(const std::vector<std::string>& args, int expected_exit) {
  std::vector<std::string> argv = {kNsel, "check", "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run(argv, {});
  EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
  return json::parse(r.out);
}

std::map<std::string, std::string> profile_env(const std::string& window) {
  return {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", window}};
}

// `nsel exec` of the example worker, whose program is killed by SIGKILL once it has begun step
// `kill_at`, as an out-of-memory killer or a failing node does.
nsel::test::RunResult run_killed(const fs::path& dir, const std::string& window,
                                 long long kill_at) {
  const fs::path progress = dir / "progress";
  const fs::path describe = dir / "describe";
  const auto started =
      nsel::test::start({kNsel, "exec", "--worker", "dtensor_policy_worker", "--output-dir",
                         dir.string(), "--", kWorker, "--steps", "8", "--work-ms", "700",
                         "--progress", progress.string(), "--describe", describe.string()},
                        profile_env(window));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const std::string begun = std::to_string(kill_at) + " ";
  while (slurp(progress).find("\n" + begun) == std::string::npos &&
         !slurp(progress).starts_with(begun) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // inside the step
  const long long pid = std::stoll(read_description(describe).at("pid"));
  EXPECT_EQ(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
  return nsel::test::finish(started);
}

const json& only_report(const json& check) {
  EXPECT_EQ(check["reports"].size(), 1u) << check.dump(2);
  return check["reports"][0];
}

TEST_F(Reports, CheckSaysOkForACompleteReportHoldingItsWindow) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("check-ok");
  place(f.report, root / f.report.filename());
  place(f.manifest, root / f.manifest.filename());
  const json check = check_json({root.string()}, 0);
  EXPECT_EQ(check["nsel_check"], 1);
  EXPECT_EQ(check["processes"], 1);
  EXPECT_EQ(check["exit_code"], 0);
  EXPECT_EQ(check["counts"]["ok"], 1);
  const json& r = only_report(check);
  EXPECT_EQ(r["verdict"], "ok");
  EXPECT_EQ(r["window_steps"], json::array({2, 3}));
  EXPECT_EQ(r["steps"], json::array({2, 3}));  // read from the report's own export
  EXPECT_EQ(r["reason"], "holds steps 2-3");
  EXPECT_EQ(r["exit_status"], 0);
  const auto text = run({kNsel, "check", root.string()}, {});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("Verdict: OK: 1 report(s) of 1 process(es): 1 ok"), std::string::npos)
      << text.out;
  fs::remove_all(root);
}

TEST_F(Reports, CheckNamesAWorkerKilledBeforeItsWindow) {
  const fs::path root = make_temp_dir("check-killed-before");
  const auto exec = run_killed(root, "4:6", 1);
  EXPECT_EQ(exec.exit_code, 128 + SIGKILL) << exec.err;
  const json check = check_json({root.string()}, 1);
  const json& r = only_report(check);
  EXPECT_EQ(r["verdict"], "killed_before_window");
  EXPECT_EQ(r["state"], "missing");
  EXPECT_EQ(r["exit_status"], 137);
  EXPECT_EQ(r["reason"],
            "no report: killed by SIGKILL (exit status 137) before its window 4:6 opened");
  const auto text = run({kNsel, "check", root.string()}, {});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("Verdict: FAILED: 1 report(s) of 1 process(es): 1 killed_before_window"),
            std::string::npos)
      << text.out;
  fs::remove_all(root);
}

TEST_F(Reports, CheckNamesAWorkerKilledInsideItsWindow) {
  const fs::path root = make_temp_dir("check-killed-inside");
  const auto exec = run_killed(root, "2:5", 3);
  EXPECT_EQ(exec.exit_code, 128 + SIGKILL) << exec.err;
  const json check = check_json({root.string()}, 1);
  const json& r = only_report(check);
  // nsys writes a report, so the files alone look fine (as nsel ls sees them) ...
  EXPECT_EQ(r["state"], "complete");
  const json files_only = check_json({"--files-only", root.string()}, 0);
  EXPECT_EQ(only_report(files_only)["verdict"], "ok") << files_only.dump(2);
  // ... but it lacks the steps of its window.
  EXPECT_EQ(r["verdict"], "killed_in_window") << r.dump(2);
  EXPECT_EQ(r["window_steps"], json::array({2, 3, 4}));
  EXPECT_NE(r["reason"].get<std::string>().find("killed by SIGKILL (exit status 137)"),
            std::string::npos)
      << r["reason"];
  fs::remove_all(root);
}

TEST_F(Reports, CheckSaysTheWindowWasNeverReached) {
  const RealFiles& f = real_files();  // steps 1-2 of a 50:60 window
  const fs::path root = make_temp_dir("check-never");
  place(f.missing_manifest, root / f.missing_manifest.filename());
  const json check = check_json({root.string()}, 1);
  const json& r = only_report(check);
  EXPECT_EQ(r["verdict"], "window_not_reached");
  EXPECT_EQ(r["reason"],
            "no report: the program ended (exit status 0) before its window 50:60 opened at step "
            "50");
  fs::remove_all(root);
}

TEST_F(Reports, CheckWaitsForAReportStillBeingWritten) {
  const fs::path root = make_temp_dir("check-writing");
  const auto started =
      nsel::test::start({kNsel, "exec", "--worker", "dtensor_policy_worker", "--output-dir",
                         root.string(), "--", kWorker, "--steps", "3", "--work-ms", "1500"},
                        profile_env("2:3"));
  // Once the manifest names the program's process id, the run is under way.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool manifest = false;
  while (!manifest && std::chrono::steady_clock::now() < deadline) {
    for (const fs::path& file : nsel::test::files_in(root)) {
      const std::string name = file.filename().string();
      manifest = manifest || (name.ends_with(".nsel.json") && name.front() != '.');
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(manifest);
  const json during = check_json({root.string()}, 3);
  EXPECT_EQ(only_report(during)["verdict"], "writing") << during.dump(2);
  const auto text = run({kNsel, "check", root.string()}, {});
  EXPECT_EQ(text.exit_code, 3);
  EXPECT_NE(text.out.find("Verdict: NOT YET"), std::string::npos) << text.out;
  const auto exec = nsel::test::finish(started);
  ASSERT_EQ(exec.exit_code, 0) << exec.err;
  // A finished report changed less than 30 s ago still counts as written: its manifest says
  // the process ended, so the verdict is final at once.
  // Nsight Systems 2022.4 lost every NVTX event of a report in 3 of 12 such runs here;
  // the verdict says so, as the report's own export shows.
  const auto reports = nsel::test::reports_in(root);
  ASSERT_EQ(reports.size(), 1u);
  const std::vector<long long> exported = nsel::test::exported_steps(reports[0]);
  const bool lost = exported.empty();
  const json after = check_json({root.string()}, lost ? 1 : 0);
  EXPECT_EQ(only_report(after)["verdict"], lost ? "lost_steps" : "ok") << after.dump(2);
  EXPECT_EQ(only_report(after)["steps"], json(exported));
  if (!lost) {
    EXPECT_EQ(exported, std::vector<long long>({2}));
  }
  fs::remove_all(root);
}

TEST_F(Reports, CheckNamesALeftOverQdstrm) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("check-qdstrm");
  place(f.qdstrm, root / "dtensor_policy_worker_2:4_4242.qdstrm");
  const json check = check_json({root.string()}, 1);
  const json& r = only_report(check);
  EXPECT_EQ(r["verdict"], "qdstrm");
  EXPECT_NE(r["reason"].get<std::string>().find("nsel recover"), std::string::npos);
  fs::remove_all(root);
}

TEST_F(Reports, CheckNamesAZeroByteReport) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("check-empty");
  const fs::path report = root / f.report.filename();
  spit(report, "");
  fs::last_write_time(report, fs::file_time_type::clock::now() - std::chrono::seconds(600));
  place(f.manifest, root / f.manifest.filename());
  const json check = check_json({root.string()}, 1);
  const json& r = only_report(check);
  EXPECT_EQ(r["verdict"], "empty");
  EXPECT_EQ(r["reason"], "0 bytes: too small to hold a profile");
  fs::remove_all(root);
}

TEST_F(Reports, CheckCountsExpectedProcessesThatNeverStarted) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("check-expect");
  place(f.report, root / f.report.filename());
  place(f.manifest, root / f.manifest.filename());
  check_json({"--expect", "1", root.string()}, 0);
  const json check = check_json({"--expect", "3", root.string()}, 1);
  EXPECT_EQ(check["expected"], 3);
  EXPECT_EQ(check["processes"], 1);
  EXPECT_EQ(check["never_started"], 2);
  const auto text = run({kNsel, "check", "--expect", "3", root.string()}, {});
  EXPECT_NE(text.out.find("2 selected process(es) expected but never started"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("1 ok, 2 never_started"), std::string::npos) << text.out;
  fs::remove_all(root);
}

TEST(Check, BadInputIsOneLineAndExitTwo) {
  const fs::path root = make_temp_dir("check-bad");
  for (const auto& [args, line] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--expect", "0", root.string()},
            "nsel: error: --expect='0': out of range; expected a whole number from 1 to "
            "1000000000"},
           {{"/nonexistent/ray"}, "nsel: error: ROOT='/nonexistent/ray': no such folder"}}) {
    std::vector<std::string> argv = {kNsel, "check"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run(argv, {});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.find(line), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // Nothing found is a failed run, not a pass.
  const auto none = run({kNsel, "check", root.string()}, {});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.out.find("Verdict: FAILED: no report or manifest found"), std::string::npos)
      << none.out;
  fs::remove_all(root);
}

// nsel ls shows the verdict nsel check gives from the files alone, for every kind of report.
TEST_F(Reports, LsShowsTheVerdictsOfCheck) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("check-ls");
  place(f.report, root / "ok" / f.report.filename());
  place(f.manifest, root / "ok" / f.manifest.filename());
  place(f.missing_manifest, root / "never" / f.missing_manifest.filename());
  place(f.qdstrm, root / "left" / "dtensor_policy_worker_2:4_4242.qdstrm");
  spit(root / "empty" / "dtensor_policy_worker_2:4_4243.nsys-rep", "");
  fs::last_write_time(root / "empty" / "dtensor_policy_worker_2:4_4243.nsys-rep",
                      fs::file_time_type::clock::now() - std::chrono::seconds(600));
  const json check = check_json({"--files-only", root.string()}, 1);
  const auto ls = run({kNsel, "ls", "--json", root.string()}, {});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  const json listed = json::parse(ls.out);
  ASSERT_EQ(listed["reports"].size(), 4u) << listed.dump(2);
  ASSERT_EQ(check["reports"].size(), 4u);
  std::map<std::string, std::string> verdicts;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(listed["reports"][i]["path"], check["reports"][i]["path"]);
    EXPECT_EQ(listed["reports"][i]["verdict"], check["reports"][i]["verdict"]);
    EXPECT_EQ(listed["reports"][i]["verdict_reason"], check["reports"][i]["reason"]);
    verdicts[fs::path(listed["reports"][i]["path"].get<std::string>()).parent_path().filename()] =
        listed["reports"][i]["verdict"];
  }
  EXPECT_EQ(
      verdicts,
      (std::map<std::string, std::string>{
          {"empty", "empty"}, {"left", "qdstrm"}, {"never", "window_not_reached"}, {"ok", "ok"}}));
  const auto table = run({kNsel, "ls", root.string()}, {});
  EXPECT_NE(table.out.find("window_not_reached    missing (no report: the program ended"),
            std::string::npos)
      << table.out;
  fs::remove_all(root);
}

}  // namespace

namespace {

// Without ROOT, "the run" is the newest session under the default roots: an older, broken one
// does not count.
TEST_F(Reports, CheckWithoutRootTakesTheNewestSession) {
  if (fs::exists("/tmp/ray")) GTEST_SKIP() << "/tmp/ray exists: its sessions would be checked";
  const RealFiles& f = real_files();
  const fs::path temp = make_temp_dir("check-default");
  const fs::path demo = temp / "nsel-demo";
  const std::string older = "session_2026-01-01_10-00-00_000001_100";
  const std::string newer = "session_2026-01-02_10-00-00_000001_200";
  place(f.qdstrm, demo / older / "logs" / "nsight" / "dtensor_policy_worker_2:4_4242.qdstrm");
  place(f.report, demo / newer / "logs" / "nsight" / f.report.filename());
  place(f.manifest, demo / newer / "logs" / "nsight" / f.manifest.filename());
  const auto r = run({kNsel, "check", "--json"}, {{"TMPDIR", temp.string()}});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const json check = json::parse(r.out);
  EXPECT_EQ(check["session"], newer);
  EXPECT_EQ(only_report(check)["verdict"], "ok");
  fs::remove_all(temp);
}

}  // namespace

namespace {

const std::string kNsys2023 = "/opt/nsight-systems-2023.4/usr/bin/nsys";

// nsel check exports each report with the nsys that can read it, as nsel report does: a 2023.4
// report is read while Debian's 2022.4 (which cannot read it) is first on PATH.
TEST(CheckGenerations, A2023ReportIsReadWhile2022IsFirstOnPath) {
  if (::access(kNsys2023.c_str(), X_OK) != 0 || ::access("/usr/bin/nsys", X_OK) != 0) {
    GTEST_SKIP() << "needs /usr/bin/nsys and " << kNsys2023 << " (scripts/setup.sh)";
  }
  const fs::path root = make_temp_dir("check-2023");
  const auto made = run({kNsys2023, "profile", "-t", "nvtx", "-s", "none", "--cpuctxsw=none", "-o",
                         (root / "dtensor_policy_worker_1:3_4242").string(), kWorker, "--steps",
                         "3", "--work-ms", "20"},
                        {});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  // No manifest says it is finished: old enough to count as written.
  fs::last_write_time(root / "dtensor_policy_worker_1:3_4242.nsys-rep",
                      fs::file_time_type::clock::now() - std::chrono::minutes(10));
  const auto r = run({kNsel, "check", "--json", root.string()}, {{"PATH", "/usr/bin:/bin"}});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const json check = json::parse(r.out);
  EXPECT_EQ(only_report(check)["verdict"], "ok") << check.dump(2);
  EXPECT_EQ(only_report(check)["steps"], json::array({1, 2, 3}));
  fs::remove_all(root);
}

std::set<std::string> paths_in(const json& items, const char* key) {
  std::set<std::string> paths;
  for (const json& item : items) paths.insert(item[key].get<std::string>());
  return paths;
}

// ls, check and report find the same reports: one of a worker whose name starts with '.', and
// one reached through a link (the same file twice counts once).
TEST_F(Reports, EveryCommandFindsHiddenAndLinkedReports) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("check-find");
  const fs::path outside = make_temp_dir("check-find-outside");
  const fs::path hidden = root / "a" / ".hidden_worker_2:4_4301.nsys-rep";
  place(f.report, hidden);
  place(f.report, outside / "dtensor_policy_worker_2:4_4302.nsys-rep");
  fs::create_directories(root / "b");
  const fs::path linked = root / "b" / "dtensor_policy_worker_2:4_4302.nsys-rep";
  fs::create_symlink(outside / "dtensor_policy_worker_2:4_4302.nsys-rep", linked);
  fs::create_symlink(hidden, root / "b" / "alias_2:4_4303.nsys-rep");  // counted once, as .hidden
  const std::set<std::string> expected = {hidden.string(), linked.string()};

  const auto ls = run({kNsel, "ls", "--json", root.string()}, {});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(paths_in(json::parse(ls.out)["reports"], "path"), expected) << ls.out;
  const json check = check_json({root.string()}, 0);
  EXPECT_EQ(paths_in(check["reports"], "path"), expected) << check.dump(2);
  for (const json& r : check["reports"]) EXPECT_EQ(r["verdict"], "ok") << r.dump(2);
  const auto report = run({kNsel, "report", "--json", "-q", root.string()}, {});
  ASSERT_EQ(report.exit_code, 0) << report.out << report.err;
  EXPECT_EQ(paths_in(json::parse(report.out)["processes"], "report"), expected) << report.out;
  fs::remove_all(root);
  fs::remove_all(outside);
}

// The command run as `nobody` where the test runs as root (whom permission bits never stop).
std::vector<std::string> as_nobody(std::vector<std::string> argv) {
  if (::geteuid() != 0) return argv;
  argv.insert(argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
  return argv;
}

// A folder that cannot be read is named by ls, check and report, and check is not OK.
TEST_F(Reports, AFolderThatCannotBeReadIsNamedAndNeverOk) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("check-unreadable");
  place(f.report, root / "ok" / f.report.filename());
  place(f.manifest, root / "ok" / f.manifest.filename());
  place(f.report, root / "locked" / "dtensor_policy_worker_2:4_4401.nsys-rep");
  check_json({root.string()}, 0);  // every report is fine (and now has its export beside it)
  if (::geteuid() == 0) {
    if (run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", kNsel,
             "--version"},
            {})
            .exit_code != 0) {
      fs::remove_all(root);
      GTEST_SKIP() << "nobody (65534) cannot run " << kNsel << " here";
    }
    // The tree is nobody's but for one folder, which stays root's alone.
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      ASSERT_EQ(::lchown(entry.path().c_str(), 65534, 65534), 0) << entry.path();
    }
    ASSERT_EQ(::chown(root.c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chown((root / "locked").c_str(), 0, 0), 0);
  }
  fs::permissions(root / "locked", fs::perms::owner_all);
  if (::geteuid() != 0) fs::permissions(root / "locked", fs::perms::none);
  const std::string locked = (root / "locked").string();

  const auto checked = run(as_nobody({kNsel, "check", "--json", root.string()}), {});
  EXPECT_EQ(checked.exit_code, 1) << checked.out << checked.err;
  const json check = json::parse(checked.out);
  EXPECT_EQ(check["unreadable_folders"], json::array({locked})) << check.dump(2);
  EXPECT_EQ(check["counts"]["ok"], 1);
  const auto text = run(as_nobody({kNsel, "check", root.string()}), {});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(
      text.out.find("Verdict: FAILED: 1 report(s) of 1 process(es): 1 ok; cannot read " + locked),
      std::string::npos)
      << text.out;
  const auto ls = run(as_nobody({kNsel, "ls", "--json", root.string()}), {});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  const json listed = json::parse(ls.out);
  ASSERT_EQ(listed["notes"].size(), 1u) << ls.out;
  EXPECT_EQ(listed["notes"][0]["kind"], "unreadable_folder");
  EXPECT_EQ(listed["notes"][0]["path"], locked);
  const auto ls_text = run(as_nobody({kNsel, "ls", root.string()}), {});
  EXPECT_NE(ls_text.out.find("note: cannot read '" + locked + "'"), std::string::npos)
      << ls_text.out;
  const auto report = run(as_nobody({kNsel, "report", "--json", "-q", root.string()}), {});
  EXPECT_EQ(report.exit_code, 1) << report.out << report.err;
  const json set = json::parse(report.out);
  EXPECT_EQ(set["processes"].size(), 1u);
  ASSERT_EQ(set["failures"].size(), 1u) << report.out;
  EXPECT_EQ(set["failures"][0]["report"], locked);
  fs::permissions(root / "locked", fs::perms::owner_all);
  fs::remove_all(root);
}

// A window may outlive the job (NRL_NSYS_PROFILE_STEP_RANGE=3:10, 5 steps): a job that ends
// cleanly inside it is a normal run, and nsel demo passes on it.
TEST(CheckWindow, AJobEndingCleanlyInsideItsWindowIsOk) {
  const fs::path root = make_temp_dir("check-outlived");
  const auto exec = run({kNsel, "exec", "--worker", "dtensor_policy_worker", "--output-dir",
                         root.string(), "--", kWorker, "--steps", "5", "--work-ms", "20"},
                        profile_env("3:10"));
  ASSERT_EQ(exec.exit_code, 0) << exec.err;
  const auto reports = nsel::test::reports_in(root);
  ASSERT_EQ(reports.size(), 1u);
  if (nsel::test::exported_steps(reports[0]).empty()) {
    // nsys 2022.4 now and then writes such a report without any NVTX event (3 of 12 runs): then
    // the claim to check is that nsel never calls it ok, and names the loss.
    const json lost = check_json({root.string()}, 1);
    EXPECT_EQ(only_report(lost)["verdict"], "lost_steps") << lost.dump(2);
    EXPECT_NE(only_report(lost)["reason"].get<std::string>().find("holds no NVTX event at all"),
              std::string::npos)
        << lost.dump(2);
    fs::remove_all(root);
    return;
  }
  const json check = check_json({root.string()}, 0);
  const json& r = only_report(check);
  EXPECT_EQ(r["verdict"], "ok");
  EXPECT_EQ(r["steps"], json::array({3, 4, 5}));
  EXPECT_EQ(r["reason"],
            "holds steps 3-5 of 3-9: ended cleanly (exit status 0) after step 5, inside its "
            "window 3:10");
  fs::remove_all(root);
}

// `nsel exec` of `sh -c SCRIPT` as the worker, window 2:4, captured by an NVTX range.
nsel::test::RunResult exec_shell(const fs::path& root, const std::string& script) {
  auto env = profile_env("2:4");
  env["NSEL_CAPTURE"] = "nvtx";
  return run({kNsel, "exec", "--worker", "dtensor_policy_worker", "--output-dir", root.string(),
              "--", "/bin/sh", "-c", script},
             env);
}

// A program that ends before its window opens started all the same: window_not_reached, with
// its manifest under its real name (before: never_started, the manifest left under its hidden
// pending name, because nobody saw the short program's pid).
TEST(CheckWindow, AProgramEndingBeforeItsWindowIsWindowNotReachedUnderItsName) {
  const fs::path root = make_temp_dir("check-before-window");
  const auto exec = exec_shell(root, "exit 0");
  EXPECT_EQ(exec.exit_code, 0) << exec.err;
  std::vector<std::string> manifests;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.path().string().ends_with(".nsel.json")) {
      manifests.push_back(entry.path().filename().string());
    }
  }
  ASSERT_EQ(manifests.size(), 1u);
  EXPECT_TRUE(manifests[0].starts_with("dtensor_policy_worker_2:4_")) << manifests[0];
  const json check = check_json({root.string()}, 1);
  const json& r = only_report(check);
  EXPECT_EQ(r["verdict"], "window_not_reached") << check.dump(2);
  EXPECT_EQ(r["reason"],
            "no report: the program ended (exit status 0) before its window 2:4 opened at step 2");
  fs::remove_all(root);
}

// A program that forks its work and exits at once: nsys names the report for the program's own
// pid (the shell's), which the manifest now names, so the report gets its contract name and
// check says ok (before, with nsys 2022.4: the child's pid in the manifest, the report left
// under its hidden name, "nsys_failed", exit 1).
TEST(CheckWindow, AProgramThatForksItsWorkAndExitsKeepsItsReport) {
  const fs::path root = make_temp_dir("check-forks");
  const auto exec = exec_shell(root, "'" + kWorker + "' --steps 5 --work-ms 100 & exit 0");
  ASSERT_EQ(exec.exit_code, 0) << exec.err;
  const auto reports = nsel::test::reports_in(root);
  ASSERT_EQ(reports.size(), 1u) << exec.err;
  EXPECT_TRUE(reports[0].filename().string().starts_with("dtensor_policy_worker_2:4_"))
      << reports[0];
  if (nsel::test::exported_steps(reports[0]).empty()) {
    // nsys 2022.4 now and then writes a report without any NVTX event (see above).
    EXPECT_EQ(only_report(check_json({root.string()}, 1))["verdict"], "lost_steps");
    fs::remove_all(root);
    return;
  }
  const json check = check_json({root.string()}, 0);
  EXPECT_EQ(only_report(check)["verdict"], "ok") << check.dump(2);
  EXPECT_EQ(only_report(check)["steps"], json::array({2, 3})) << check.dump(2);
  fs::remove_all(root);
}

TEST(CheckWindow, DemoPassesWhenItsWindowOutlivesTheJob) {
  const fs::path temp = make_temp_dir("check-demo-outlived");
  const auto demo =
      run({kNsel, "demo", "--steps", "5", "--work-ms", "20", "--root", (temp / "demo").string()},
          profile_env("3:10"));
  fs::remove_all(temp);
  // Under heavy load a rank's nsys may start more than the all-reduce's 30 s late: then the
  // claim to check is that the demo fails loudly for it, never with an OK verdict.
  if (demo.exit_code != 0 && demo.err.find("gave up waiting") != std::string::npos) {
    EXPECT_EQ(demo.exit_code, 1) << demo.err;
    EXPECT_EQ(demo.out.find("): OK: "), std::string::npos) << demo.out;
    return;
  }
  EXPECT_EQ(demo.out.find("window_not_reached"), std::string::npos) << demo.out;
  EXPECT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  EXPECT_NE(demo.out.find("Verdict (nsel check"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find(": OK: "), std::string::npos) << demo.out;
}

// Ctrl-C inside the window's last step: nsys closes the open step at teardown, so the report
// seems to hold every step of the window. That step is cut, named, and not counted.
TEST(CheckCut, AStopInsideTheWindowsLastStepCutsThatStep) {
  const fs::path root = make_temp_dir("check-cut");
  const fs::path progress = root / "progress";
  const auto started = nsel::test::start(
      {kNsel, "exec", "--worker", "dtensor_policy_worker", "--output-dir", root.string(), "--",
       kWorker, "--steps", "6", "--work-ms", "600", "--progress", progress.string()},
      profile_env("2:4"), {}, true);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (slurp(progress).find("\n3 ") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // inside step 3
  ASSERT_EQ(::kill(-started.pid, SIGINT), 0);  // the terminal's Ctrl-C: the whole group
  const auto exec = nsel::test::finish(started);
  ASSERT_EQ(exec.exit_code, 128 + SIGINT) << exec.err;
  const json check = check_json({root.string()}, 1);
  const json& r = only_report(check);
  EXPECT_EQ(r["verdict"], "killed_in_window") << r.dump(2);
  EXPECT_EQ(r["exit_status"], 130);
  if (!r["steps"].empty() || !r["cut_steps"].empty()) {
    EXPECT_EQ(r["steps"], json::array({2})) << r.dump(2);
    EXPECT_EQ(r["cut_steps"], json::array({3})) << r.dump(2);
    EXPECT_NE(r["reason"].get<std::string>().find("in step 3; step 3 was cut short (left out)"),
              std::string::npos)
        << r["reason"];  // nsel report leaves the cut step out of the step comparison.
    const auto report = run({kNsel, "report", "--json", "-q", root.string()}, {});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const json set = json::parse(report.out);
    ASSERT_EQ(set["steps"].size(), 1u) << set["steps"].dump(2);
    EXPECT_EQ(set["steps"][0]["step"], 2);
  }
  fs::remove_all(root);
}

// Without ROOT, the session Ray's session_latest points to is the run, whatever its name says:
// after a clock that stepped back (a DST fall-back) the current run has the older name. Its lost
// capture fails the check, though a session with a later name is whole, and the note says which
// one was judged and which was not.
TEST_F(Reports, CheckWithoutRootJudgesTheSessionThatSessionLatestPointsTo) {
  if (fs::exists("/tmp/ray")) GTEST_SKIP() << "/tmp/ray exists: its sessions would be checked";
  const RealFiles& f = real_files();
  const fs::path temp = make_temp_dir("check-latest");
  const fs::path demo = temp / "nsel-demo";
  const std::string current = "session_2026-10-25_02-30-00_000001_300";     // after the fall-back
  const std::string later_name = "session_2026-10-25_02-45-00_000001_200";  // before it
  place(f.qdstrm, demo / current / "logs" / "nsight" / "dtensor_policy_worker_2:4_4242.qdstrm");
  place(f.report, demo / later_name / "logs" / "nsight" / f.report.filename());
  place(f.manifest, demo / later_name / "logs" / "nsight" / f.manifest.filename());
  fs::create_directory_symlink(demo / current, demo / "session_latest");
  const auto r = run({kNsel, "check", "--json"}, {{"TMPDIR", temp.string()}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const json check = json::parse(r.out);
  EXPECT_EQ(check["session"], current);
  EXPECT_EQ(check["session_chosen_by"], "session_latest");
  ASSERT_EQ(check["reports"].size(), 1u) << check.dump(2);
  EXPECT_EQ(check["reports"][0]["verdict"], "qdstrm");
  const auto text = run({kNsel, "check"}, {{"TMPDIR", temp.string()}});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("Checking " + current + " (the session session_latest points to under"),
            std::string::npos)
      << text.out;
  EXPECT_NE(
      text.out.find("note: session_latest points to " + current + ", not to the newest name " +
                    later_name + " (a clock that stepped back?); " + current +
                    ", the current run as Ray says, was judged, not " + later_name),
      std::string::npos)
      << text.out;
  fs::remove_all(temp);
}

// Without ROOT, check judges the newest session and says when it began; one that left no
// report fails, and an older one is never judged in its place.
TEST_F(Reports, CheckWithoutRootNeverJudgesAnOlderSession) {
  if (fs::exists("/tmp/ray")) GTEST_SKIP() << "/tmp/ray exists: its sessions would be checked";
  const RealFiles& f = real_files();
  const fs::path temp = make_temp_dir("check-default-empty");
  const fs::path demo = temp / "nsel-demo";
  const std::string older = "session_2026-01-01_10-00-00_000001_100";
  const std::string newer = "session_2026-01-02_11-30-05_000001_200";
  place(f.report, demo / older / "logs" / "nsight" / f.report.filename());
  place(f.manifest, demo / older / "logs" / "nsight" / f.manifest.filename());
  fs::create_directories(demo / newer / "logs" / "nsight");
  const auto r = run({kNsel, "check", "--json"}, {{"TMPDIR", temp.string()}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const json check = json::parse(r.out);
  EXPECT_EQ(check["session"], newer);
  EXPECT_EQ(check["session_started"], "2026-01-02 11:30:05");
  EXPECT_EQ(check["session_path"], (demo / newer).string());
  EXPECT_EQ(check["reports"].size(), 0u) << check.dump(2);
  const auto text = run({kNsel, "check"}, {{"TMPDIR", temp.string()}});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("Checking " + newer + " (the newest session under"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("started 2026-01-02 11:30:05"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Verdict: FAILED: the newest session, " + newer +
                          ", started 2026-01-02 11:30:05, left no report or manifest"),
            std::string::npos)
      << text.out;
  fs::remove_all(temp);
}

// `nsel exec` in a container that shares the host's name (a PID namespace of its own, whose ids
// are not the host's), judged while it runs from the host and from another container. Before,
// the host looked its ids up among its own and called it killed ("missing"), and `nsel recover`
// could rename its still-running launch's files; now the host finds it in its namespace
// (running), and a container that cannot see into that namespace says it cannot tell.
TEST(Containers, ARunInAnotherPidNamespaceIsRunningNeverKilledWhileItRuns) {
  if (geteuid() != 0) GTEST_SKIP() << "unshare --pid needs root";
  const fs::path dir = make_temp_dir("pid-namespace");
  const fs::path out = dir / "reports";
  const fs::path progress = dir / "progress";
  const fs::path describe = dir / "describe";
  // Ids far above the host's own, so that no host process can pass for the container's.
  const std::string script = "echo 199999 > /proc/sys/kernel/ns_last_pid || exit 97; \"$@\"";
  const auto started = nsel::test::start({"unshare",      "--pid",
                                          "--fork",       "--mount-proc",
                                          "sh",           "-c",
                                          script,         "sh",
                                          kNsel,          "exec",
                                          "--worker",     "dtensor_policy_worker",
                                          "--output-dir", out.string(),
                                          "--capture",    "nvtx",
                                          "--",           kWorker,
                                          "--steps",      "60",
                                          "--work-ms",    "100",
                                          "--progress",   progress.string(),
                                          "--describe",   describe.string()},
                                         profile_env("2:4"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (slurp(progress).find("\n6 ") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline && ::kill(started.pid, 0) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto ls = run({kNsel, "ls", "--json", out.string()}, {});
  const auto recover = run({kNsel, "recover", out.string()}, {});
  const auto check = run({kNsel, "check", "--json", out.string()}, {});
  const auto elsewhere =
      run({"unshare", "--pid", "--fork", "--mount-proc", kNsel, "ls", "--json", out.string()}, {});
  const bool still_running = slurp(progress).find("\n60 ") == std::string::npos;
  const std::vector<fs::path> during = nsel::test::files_in(out);
  const auto exec = nsel::test::finish(started);
  if (exec.exit_code != 0 && exec.err.find("unshare") != std::string::npos) {
    GTEST_SKIP() << "no PID namespaces here: " << exec.err;
  }
  ASSERT_EQ(exec.exit_code, 0) << exec.err;
  ASSERT_TRUE(still_running) << "the run ended before it was judged; lengthen it";
  const std::string pid = read_description(describe).at("pid");
  ASSERT_GT(std::stoll(pid), 199999) << "the container's ids were not its own";

  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  const json listed = json::parse(ls.out)["reports"];
  ASSERT_EQ(listed.size(), 1u) << ls.out;
  EXPECT_TRUE(listed[0]["state"] == "running" || listed[0]["state"] == "writing") << ls.out;
  EXPECT_EQ(listed[0]["pid"].dump(), pid) << ls.out;
  EXPECT_EQ(recover.exit_code, 0) << recover.out << recover.err;
  const std::string report_name = "dtensor_policy_worker_2:4_" + pid + ".nsys-rep";
  for (const fs::path& file : during) {
    EXPECT_NE(file.filename().string(), report_name) << "named before its launch ended";
  }
  const json judged = json::parse(check.out);
  ASSERT_EQ(judged["reports"].size(), 1u) << check.out;
  EXPECT_EQ(judged["reports"][0]["verdict"], "writing") << check.out;
  // From a container that cannot see into the other: it may run, and that is said.
  ASSERT_EQ(elsewhere.exit_code, 0) << elsewhere.err;
  const json seen = json::parse(elsewhere.out)["reports"];
  ASSERT_EQ(seen.size(), 1u) << elsewhere.out;
  EXPECT_EQ(seen[0]["state"], "running") << elsewhere.out;
  EXPECT_NE(seen[0]["reason"].get<std::string>().find(
                "it runs in another PID namespace of this host (a container), which this process "
                "cannot see into, so nobody here can tell whether it still runs"),
            std::string::npos)
      << elsewhere.out;

  // Once it has ended, the host judges it as any other run.
  EXPECT_TRUE(fs::is_regular_file(out / report_name)) << exec.err;
  const json after = check_json({out.string()}, 0);
  EXPECT_EQ(only_report(after)["verdict"], "ok") << after.dump(2);
  fs::remove_all(dir);
}

// The report's folder is full when its export is made (the report fits; its export does not).
// Before, `report` called the report "not a readable Nsight Systems report" and `check` said
// `unreadable`. Now the export is made in the cache instead, and where the cache is full too,
// both say that there was no room, and the verdict is `not_exported`.
TEST_F(Reports, AFullFolderDuringTheExportIsNamedNeverCalledUnreadable) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const RealFiles& f = real_files();
  const fs::path dir = make_temp_dir("export-disk-full");
  const fs::path out = dir / "reports";
  const fs::path cache = dir / "cache";
  const fs::path saved = dir / "saved";  // the tmpfs goes with its mount namespace
  for (const fs::path& folder : {out, cache, saved}) fs::create_directories(folder);
  // The report and its manifest, then a filler that takes what room is left; the cache gets
  // CACHE_SIZE.
  const std::string script =
      "mount -t tmpfs -o size=2m tmpfs \"$OUT\" || exit 99; "
      "mount -t tmpfs -o size=$CACHE_SIZE,mode=0700 tmpfs \"$CACHE\" || exit 99; "
      "cp \"$REPORT\" \"$MANIFEST\" \"$OUT\"/ || exit 98; "
      "dd if=/dev/zero of=\"$OUT/filler\" bs=4k 2>/dev/null; "
      "\"$NSEL\" check --json \"$OUT\" > \"$SAVED/check.json\"; echo $? > \"$SAVED/check.rc\"; "
      "\"$NSEL\" report \"$OUT\" > /dev/null 2> \"$SAVED/report.err\"; echo $? > "
      "\"$SAVED/report.rc\"; "
      "ls -A \"$OUT\" > \"$SAVED/out.txt\"; find \"$CACHE\" -name '*.sqlite' > "
      "\"$SAVED/cache.txt\"";
  const auto judged = [&](const std::string& cache_size) {
    std::map<std::string, std::string> env = {
        {"OUT", out.string()},         {"CACHE", cache.string()},         {"SAVED", saved.string()},
        {"REPORT", f.report.string()}, {"MANIFEST", f.manifest.string()}, {"NSEL", kNsel},
        {"CACHE_SIZE", cache_size},    {"XDG_CACHE_HOME", cache.string()}};
    return run({"unshare", "--mount", "sh", "-c", script}, env);
  };

  // The cache has room: the export is made there, and the report is judged as ever.
  const auto roomy = judged("64m");
  if (roomy.exit_code == 99) GTEST_SKIP() << "cannot mount a tmpfs here: " << roomy.err;
  ASSERT_EQ(roomy.exit_code, 0) << roomy.err;
  EXPECT_EQ(slurp(saved / "check.rc"), "0\n") << slurp(saved / "check.json");
  EXPECT_EQ(only_report(json::parse(slurp(saved / "check.json")))["verdict"], "ok");
  EXPECT_EQ(slurp(saved / "report.rc"), "0\n") << slurp(saved / "report.err");
  EXPECT_NE(slurp(saved / "cache.txt").find(".sqlite"), std::string::npos)
      << "no export in the cache; beside the report: " << slurp(saved / "out.txt");
  EXPECT_EQ(slurp(saved / "out.txt").find(".sqlite"), std::string::npos)
      << slurp(saved / "out.txt");

  // The cache is full too: said so, never "unreadable".
  const auto full = judged("16k");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_EQ(slurp(saved / "check.rc"), "1\n");
  const json check = json::parse(slurp(saved / "check.json"));
  const json& r = only_report(check);
  EXPECT_EQ(r["verdict"], "not_exported") << r.dump(2);
  EXPECT_EQ(check["counts"]["not_exported"], 1) << check.dump(2);
  const std::string reason = r["reason"];
  EXPECT_NE(reason.find(": not exported for want of space: '" + cache.string()), std::string::npos)
      << reason;
  EXPECT_NE(reason.find("the report itself was not judged"), std::string::npos) << reason;
  EXPECT_EQ(slurp(saved / "report.rc"), "1\n");
  const std::string said = slurp(saved / "report.err");
  EXPECT_NE(said.find("not exported for want of space"), std::string::npos) << said;
  EXPECT_EQ(said.find("not a readable Nsight Systems report"), std::string::npos) << said;
  fs::remove_all(dir);
}

}  // namespace
