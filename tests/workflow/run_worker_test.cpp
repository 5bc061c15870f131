// nsel exec's whole path without the nsel binary: what decide_worker decides for a worker, and
// run_worker replacing this process (in a forked child) when the worker runs bare.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "nsel/core/error.hpp"
#include "nsel/core/launch_settings.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/settings.hpp"
#include "nsel/launch/nsys_check.hpp"
#include "nsel/sys/process.hpp"
#include "nsel/workflow/run_worker.hpp"

namespace fs = std::filesystem;

namespace {

using Env = std::map<std::string, std::string>;

nsel::EnvLookup lookup(const Env& env) {
  return [env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

fs::path fresh_dir(const std::string& label) {
  const fs::path dir =
      fs::temp_directory_path() / ("nsel-workflow-" + label + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A folder for PATH holding an "nsys" that only leaves a mark when it is run: it shows whether
// the nsys check ran, and is never a usable nsys.
fs::path marking_nsys_dir(const fs::path& dir) {
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "nsys") << "#!/bin/sh\n: > '" << (dir / "nsys-ran").string() << "'\n";
  fs::permissions(bin / "nsys", fs::perms::owner_all);
  return bin;
}

nsel::WorkerRequest request_for(const std::string& worker, const Env& env) {
  nsel::WorkerRequest request;
  request.worker = worker;
  request.program = {"/bin/sh", "-c", "exit 7"};
  request.environment = lookup(env);
  return request;
}

const Env kPolicySelected = {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"},
                             {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}};

Env with(Env env, const std::string& name, const std::string& value) {
  env[name] = value;
  return env;
}

// The nsel::Error a call throws (its message and exit code); fails the test when none.
std::pair<std::string, int> error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const nsel::Error& e) {
    return {e.what(), e.exit_code()};
  }
  ADD_FAILURE() << "no nsel::Error thrown";
  return {"", 0};
}

}  // namespace

TEST(DecideWorker, AnUnselectedWorkerRunsBareWithoutLookingForNsys) {
  const fs::path dir = fresh_dir("unselected");
  const Env env = with(kPolicySelected, "PATH", marking_nsys_dir(dir).string() + ":/usr/bin");
  nsel::WorkerRequest request = request_for("vllm_generation_worker", env);
  request.program = {"sh", "-c", "exit 7"};  // looked up on PATH
  const nsel::WorkerLaunch launch = nsel::decide_worker(request);
  EXPECT_FALSE(launch.profiled);
  EXPECT_TRUE(launch.notices.empty());
  EXPECT_EQ(launch.program.front(), nsel::resolve_program("sh", env.at("PATH")));
  EXPECT_EQ(std::vector<std::string>(launch.program.begin() + 1, launch.program.end()),
            (std::vector<std::string>{"-c", "exit 7"}));
  EXPECT_FALSE(fs::exists(dir / "nsys-ran")) << "an unselected worker must not run nsys";
  fs::remove_all(dir);
}

TEST(DecideWorker, AMatchedWorkerOfUnknownRankIsLeftOutWithANotice) {
  const Env env = with(with(kPolicySelected, "NSEL_PROFILE_RANKS", "0"), "PATH", "/usr/bin");
  const nsel::WorkerRequest request = request_for("dtensor_policy_worker", env);
  const nsel::WorkerLaunch launch = nsel::decide_worker(request);
  EXPECT_FALSE(launch.profiled);
  // The same notice the plan gives for the same inputs.
  nsel::PlanRequest plan_request{request.worker, nsel::CaptureMode::nvtx, "", request.program};
  plan_request.identity = nsel::identify_this_process({}, lookup(env));
  const nsel::WorkerPlan plan =
      nsel::plan_worker(nsel::ProfileSettings::from_environment(lookup(env)), plan_request);
  ASSERT_FALSE(plan.notice.empty());
  EXPECT_EQ(launch.notices, std::vector<std::string>{plan.notice});
  // Given the rank on the command line, it is selected.
  nsel::WorkerRequest ranked = request;
  ranked.identity.rank = "0";
  ranked.capture = "nvtx";
  EXPECT_EQ(nsel::decide_worker(ranked).plan.profile, true);
}

TEST(DecideWorker, BadSettingsStopTheWorkerBeforeAnythingRuns) {
  const fs::path dir = fresh_dir("bad");
  const std::string path = marking_nsys_dir(dir).string();
  const Env bad_range =
      with(with(kPolicySelected, "NRL_NSYS_PROFILE_STEP_RANGE", "4:2"), "PATH", path);
  const auto expected =
      error_of([&] { nsel::ProfileSettings::from_environment(lookup(bad_range)); });
  EXPECT_EQ(
      error_of([&] { nsel::decide_worker(request_for("vllm_generation_worker", bad_range)); }),
      expected);

  const Env bad_timeout = with(with(kPolicySelected, "NSEL_STOP_TIMEOUT", "soon"), "PATH", path);
  EXPECT_EQ(
      error_of([&] { nsel::decide_worker(request_for("vllm_generation_worker", bad_timeout)); }),
      error_of([&] { nsel::LaunchSettings::from_environment(lookup(bad_timeout)); }));

  nsel::WorkerRequest bad_capture =
      request_for("dtensor_policy_worker", with(kPolicySelected, "PATH", path));
  bad_capture.capture = "gpu";
  EXPECT_EQ(error_of([&] { nsel::decide_worker(bad_capture); }),
            error_of([] { nsel::parse_capture_mode("gpu", "--capture"); }));

  nsel::WorkerRequest bad_rank =
      request_for("dtensor_policy_worker", with(kPolicySelected, "PATH", path));
  bad_rank.identity.rank = "-1";
  EXPECT_EQ(error_of([&] { nsel::decide_worker(bad_rank); }),
            error_of([] { nsel::parse_rank("-1", "--rank"); }));

  nsel::WorkerRequest no_program =
      request_for("dtensor_policy_worker", with(kPolicySelected, "PATH", path));
  no_program.program.clear();
  EXPECT_EQ(error_of([&] { nsel::decide_worker(no_program); }).second, 2);

  nsel::WorkerRequest missing =
      request_for("dtensor_policy_worker", with(kPolicySelected, "PATH", path));
  missing.program = {"no-such-program-here"};
  EXPECT_EQ(error_of([&] { nsel::decide_worker(missing); }),
            error_of([&] { nsel::resolve_program("no-such-program-here", path, "PROGRAM"); }));
  EXPECT_FALSE(fs::exists(dir / "nsys-ran")) << "bad input must stop before the nsys check";
  fs::remove_all(dir);
}

TEST(DecideWorker, ASelectedWorkerWithoutUsableNsysFailsOrRunsUnprofiledWhenAllowed) {
  const fs::path dir = fresh_dir("no-nsys");
  for (const std::string& path : {(dir / "empty").string(), marking_nsys_dir(dir).string()}) {
    fs::create_directories(dir / "empty");
    const nsel::NsysCheck check = nsel::check_nsys(path);
    ASSERT_FALSE(check.usable);
    fs::remove(dir / "nsys-ran");
    const Env env = with(kPolicySelected, "PATH", path);
    const auto [message, code] =
        error_of([&] { nsel::decide_worker(request_for("dtensor_policy_worker", env)); });
    EXPECT_EQ(fs::exists(dir / "nsys-ran"), path != (dir / "empty").string())
        << "a selected worker is checked with nsys --version";
    EXPECT_EQ(code, 127);
    EXPECT_EQ(message, "worker 'dtensor_policy_worker' is selected but " + check.problem + "; " +
                           check.fix + "; or set NSEL_ALLOW_UNPROFILED=1 to run it unprofiled");

    const nsel::WorkerLaunch allowed = nsel::decide_worker(
        request_for("dtensor_policy_worker", with(env, "NSEL_ALLOW_UNPROFILED", "1")));
    EXPECT_FALSE(allowed.profiled);
    EXPECT_TRUE(allowed.plan.profile) << "selected, though it runs bare";
    EXPECT_EQ(allowed.program, (std::vector<std::string>{"/bin/sh", "-c", "exit 7"}));
    EXPECT_EQ(allowed.notices,
              std::vector<std::string>{"nsel: warning: worker 'dtensor_policy_worker' is selected "
                                       "but runs UNPROFILED (NSEL_ALLOW_UNPROFILED=1): " +
                                       check.problem + "; to profile it, " + check.fix});
  }
  fs::remove_all(dir);
}

// Planned once, the plan is the one plan_worker makes from the same inputs.
TEST(DecideWorker, ASelectedWorkerGetsTheWholePlanOnce) {
  const std::string path = nsel::environment_variable("PATH").value_or("");
  const nsel::NsysCheck check = nsel::check_nsys(path);
  if (!check.usable) GTEST_SKIP() << "no usable nsys here: " << check.problem;
  for (const Env& settings :
       {kPolicySelected, with(kPolicySelected, "NRL_NSYS_PROFILE_STEP_RANGE", "2:4,6:8")}) {
    const Env env = with(settings, "PATH", path);
    nsel::WorkerRequest request = request_for("dtensor_policy_worker", env);
    request.output_dir = "/tmp/reports";
    request.capture = "nvtx";  // no GPU probe
    request.identity.rank = "3";
    const nsel::WorkerLaunch launch = nsel::decide_worker(request);
    ASSERT_TRUE(launch.profiled);
    EXPECT_TRUE(launch.notices.empty());

    nsel::ProfileSettings profile = nsel::ProfileSettings::from_environment(lookup(env));
    profile.capture = nsel::CaptureMode::nvtx;
    nsel::PlanRequest plan_request{request.worker, nsel::CaptureMode::nvtx, request.output_dir,
                                   request.program, *check.path};
    plan_request.identity = nsel::identify_this_process(request.identity, lookup(env));
    // This launch's tag: its pid and a random word (pids repeat across PID namespaces).
    const std::string output = launch.plan.options.get("o").value_or("");
    ASSERT_NE(output.find("_%p.nsel" + std::to_string(getpid()) + "-"), std::string::npos)
        << output;
    plan_request.report_tag = output.substr(output.find("_%p.") + 4);
    plan_request.claim_report_name = true;
    const nsel::WorkerPlan expected = nsel::plan_worker(profile, plan_request);
    EXPECT_EQ(launch.plan.report_output, expected.report_output);
    EXPECT_EQ(launch.plan.command, expected.command);
    EXPECT_EQ(launch.plan.environment, expected.environment);
    EXPECT_EQ(launch.plan.reason, expected.reason);
    EXPECT_EQ(launch.plan.repeated_reports.has_value(), expected.repeated_reports.has_value());
    EXPECT_EQ(launch.plan.command.front(), *check.path);
  }
}

namespace {

// run_worker in a forked child (it replaces the process): the child's exit code and the lines
// it told.
std::pair<int, std::string> run_in_child(const nsel::WorkerRequest& request, const fs::path& told,
                                         const std::function<void()>& before = {}) {
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    if (before) before();
    int code = 0;
    try {
      code = nsel::run_worker(request, [&](const std::string& line) {
        std::ofstream(told, std::ios::app) << line << "\n";
      });
    } catch (const nsel::Error& e) {
      std::ofstream(told, std::ios::app) << "error: " << e.what() << "\n";
      code = e.exit_code();
    }
    _exit(code);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::ifstream in(told);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
          std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>())};
}

}  // namespace

TEST(RunWorker, ReplacesThisProcessWithTheProgramWhenItRunsBare) {
  const fs::path dir = fresh_dir("run");
  const std::string path = (dir / "empty").string();
  fs::create_directories(path);
  const auto unselected =
      run_in_child(request_for("vllm_generation_worker", with(kPolicySelected, "PATH", path)),
                   dir / "told-unselected");
  EXPECT_EQ(unselected, std::make_pair(7, std::string()));

  const Env allowed = with(with(kPolicySelected, "PATH", path), "NSEL_ALLOW_UNPROFILED", "1");
  const nsel::WorkerLaunch decided =
      nsel::decide_worker(request_for("dtensor_policy_worker", allowed));
  ASSERT_EQ(decided.notices.size(), 1u);
  EXPECT_EQ(run_in_child(request_for("dtensor_policy_worker", allowed), dir / "told-allowed"),
            std::make_pair(7, decided.notices.front() + "\n"));

  // Without the opt-out the worker never starts: nsel's error and exit code 127.
  const auto refused =
      run_in_child(request_for("dtensor_policy_worker", with(kPolicySelected, "PATH", path)),
                   dir / "told-refused");
  EXPECT_EQ(refused.first, 127);
  EXPECT_TRUE(refused.second.starts_with("error: worker 'dtensor_policy_worker' is selected but "))
      << refused.second;
  fs::remove_all(dir);
}

namespace {

// In a forked child: a mount namespace of its own with a read-only tmpfs on `folder`, so that
// the folder refuses new files even to root. Exits 99 where mounting is not allowed.
std::function<void()> read_only_mount(const fs::path& folder) {
  return [folder] {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", folder.c_str(), "tmpfs", MS_RDONLY, "size=64k") != 0) {
      _exit(99);
    }
  };
}

}  // namespace

// What can be checked before the program starts is: a --output-dir that is a file, a folder that
// refuses new files (a read-only mount: permission bits do not stop root), and a report name
// longer than the file system allows. One line, exit code 2, and the program never runs.
TEST(RunWorker, AReportFolderThatCannotTakeTheReportStopsTheWorkerBeforeItStarts) {
  const std::string path = nsel::environment_variable("PATH").value_or("");
  const nsel::NsysCheck check = nsel::check_nsys(path);
  if (!check.usable) GTEST_SKIP() << "no usable nsys here: " << check.problem;
  const fs::path dir = fresh_dir("folder");
  const Env env = with(kPolicySelected, "PATH", path);
  const auto request_into = [&](const fs::path& output_dir, const std::string& worker) {
    nsel::WorkerRequest request = request_for(worker, env);
    request.output_dir = output_dir.string();
    request.capture = "nvtx";
    request.program = {"/bin/sh", "-c", "touch \"$0\"", (dir / "ran").string()};
    return request;
  };

  std::ofstream(dir / "a-file") << "x";
  EXPECT_EQ(run_in_child(request_into(dir / "a-file", "dtensor_policy_worker"), dir / "told-file"),
            std::make_pair(2, "error: --output-dir='" + (dir / "a-file").string() +
                                  "': it exists and is not a folder; expected a folder for the "
                                  "reports\n"));

  fs::create_directories(dir / "read-only");
  const auto read_only = run_in_child(request_into(dir / "read-only", "dtensor_policy_worker"),
                                      dir / "told-read-only", read_only_mount(dir / "read-only"));
  if (read_only.first == 99) {
    std::fprintf(stderr,
                 "read-only folder not checked: cannot mount a read-only tmpfs here "
                 "(needs root and mount namespaces)\n");
  } else {
    EXPECT_EQ(read_only,
              std::make_pair(2, "error: --output-dir='" + (dir / "read-only").string() +
                                    "': the report's folder '" + (dir / "read-only").string() +
                                    "' does not take a new file (Read-only file system); "
                                    "expected a folder nsel and nsys can write to\n"));
  }

  const long name_max = pathconf(dir.c_str(), _PC_NAME_MAX);
  const std::string long_worker = std::string(static_cast<size_t>(name_max) - 20, 'p') + "_policy";
  const auto too_long = run_in_child(request_into(dir / "out", long_worker), dir / "told-long");
  EXPECT_EQ(too_long.first, 2);
  EXPECT_TRUE(too_long.second.starts_with("error: --worker='" + long_worker +
                                          "': a file name in the report's folder would be "))
      << too_long.second;
  EXPECT_NE(too_long.second.find("more than the " + std::to_string(name_max) +
                                 " its file system allows; expected a worker name of at most "),
            std::string::npos)
      << too_long.second;
  EXPECT_EQ(std::count(too_long.second.begin(), too_long.second.end(), '\n'), 1);

  EXPECT_FALSE(fs::exists(dir / "ran")) << "the program must not start";
  fs::remove_all(dir);
}
