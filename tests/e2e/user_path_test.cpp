// A user's path with the real nsel and the nsys first on PATH: options nsys refuses fail before
// anything starts, with nsys's own line; the rank given at launch is in the manifest and in
// every command's output, and diff pairs and names processes by it; a report whose steps hold
// no range says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "nsel/core/error.hpp"
#include "nsel/core/nsys_options.hpp"
#include "nsel/core/step_window.hpp"
#include "nsel/launch/nsys_check.hpp"
#include "nsel/sys/process.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using nsel::test::make_temp_dir;

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kWorker = NSEL_WORKER_BINARY;
const std::string kPolicy = "dtensor_policy_worker";
using Env = std::map<std::string, std::string>;

Env policy_window(const std::string& extra_options = "") {
  Env env = {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}};
  env["NRL_NSYS_EXTRA_OPTIONS"] = extra_options;
  // The test runner's own rank variables must not leak into the identity of a launched process.
  for (const char* name : {"RANK", "LOCAL_RANK", "SLURM_PROCID", "SLURM_LOCALID",
                           "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK"}) {
    env[name] = "";
  }
  return env;
}

std::string nsys_on_path() {
  return nsel::resolve_program("nsys", nsel::environment_variable("PATH").value_or(""), "nsys");
}

nsel::NsysOptions contract_options() {
  return nsel::NsysOptions::contract_defaults(kPolicy, nsel::parse_step_window("2:4"));
}

std::string head(const std::string& text, std::size_t n) {
  return text.substr(0, n);
}

}  // namespace

TEST(OptionCheck, NsysNamesAnUnknownOptionAndAcceptsKnownOnes) {
  const std::string nsys = nsys_on_path();
  const auto known = nsel::ask_nsys_about_options(nsys, contract_options().to_argv());
  EXPECT_TRUE(known.asked) << known.problem;
  EXPECT_TRUE(known.known) << known.refusal;
  nsel::NsysOptions bogus = contract_options();
  bogus.merge_json(R"({"bogus-option": "1"})");
  const auto unknown = nsel::ask_nsys_about_options(nsys, bogus.to_argv());
  EXPECT_TRUE(unknown.asked) << unknown.problem;
  EXPECT_FALSE(unknown.known);
  EXPECT_EQ(unknown.refusal, "unrecognised option '--bogus-option=1'");
}

TEST(OptionCheck, ATrialRunCatchesAValueThatOnlyProfilingChecks) {
  const std::string nsys = nsys_on_path();
  nsel::NsysOptions bad_value = contract_options();
  bad_value.merge_json(R"({"t": "cuda,bogus"})");
  // nsys profile --help accepts the value; only a run refuses it.
  EXPECT_TRUE(nsel::ask_nsys_about_options(nsys, bad_value.to_argv()).known);
  const auto refused = nsel::try_nsys_options(nsys, bad_value);
  EXPECT_TRUE(refused.ran) << refused.problem;
  EXPECT_FALSE(refused.accepted);
  EXPECT_TRUE(refused.usage);
  EXPECT_EQ(refused.refusal, "Illegal --trace argument 'bogus'");
  const auto accepted = nsel::try_nsys_options(nsys, contract_options());
  EXPECT_TRUE(accepted.ran) << accepted.problem;
  EXPECT_TRUE(accepted.accepted) << accepted.refusal;
  try {
    nsel::require_known_options(bad_value, nsys, "X", std::string(R"({"t": "cuda,bogus"})"), true);
    FAIL() << "a refused value must throw";
  } catch (const nsel::Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(std::string(e.what()),
              "NRL_NSYS_EXTRA_OPTIONS='{\"t\": \"cuda,bogus\"}': Nsight Systems X (" + nsys +
                  ") refuses it: Illegal --trace argument 'bogus'; expected options and values "
                  "that 'nsys profile --help' lists, for example '{\"t\": \"cuda,nvtx,osrt\"}'");
  }
}

TEST(OptionCheck, PlanAndExecRefuseAnUnknownOptionBeforeAnythingStarts) {
  const fs::path dir = make_temp_dir("option-check");
  const Env env = policy_window(R"({"bogus-option": "1"})");
  const std::string expected_start =
      "nsel: error: NRL_NSYS_EXTRA_OPTIONS='{\"bogus-option\": \"1\"}': Nsight Systems ";
  const std::string expected_part = "refuses it: unrecognised option '--bogus-option=1'";
  const auto plan = nsel::test::run({kNsel, "plan", kPolicy}, env);
  EXPECT_EQ(plan.exit_code, 2) << plan.err;
  EXPECT_EQ(head(plan.err, expected_start.size()), expected_start) << plan.err;
  EXPECT_NE(plan.err.find(expected_part), std::string::npos) << plan.err;
  EXPECT_EQ(std::count(plan.err.begin(), plan.err.end(), '\n'), 1) << plan.err;
  const auto exec = nsel::test::run(
      {kNsel, "exec", "--worker", kPolicy, "--output-dir", (dir / "reports").string(), "--",
       kWorker, "--steps", "4", "--describe", (dir / "ran").string()},
      env);
  EXPECT_EQ(exec.exit_code, 2) << exec.err;
  EXPECT_EQ(head(exec.err, expected_start.size()), expected_start) << exec.err;
  EXPECT_EQ(std::count(exec.err.begin(), exec.err.end(), '\n'), 1) << exec.err;
  EXPECT_FALSE(fs::exists(dir / "ran")) << "the worker must not start";
  EXPECT_FALSE(fs::exists(dir / "reports")) << "nothing written";
  // Without a selected worker nothing is asked of nsys.
  const auto bare = nsel::test::run({kNsel, "plan", "vllm_generation_worker"}, env);
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  fs::remove_all(dir);
}

namespace {

// Two policy ranks under `nsel exec --rank`, run together into `dir`; the last rank computes
// `slow_percent` slower.
void run_two_ranks(const fs::path& dir, int work_ms, bool train) {
  std::vector<nsel::test::Started> started;
  for (int rank : {0, 1}) {
    std::vector<std::string> argv = {kNsel,          "exec",
                                     "--worker",     kPolicy,
                                     "--rank",       std::to_string(rank),
                                     "--local-rank", std::to_string(rank),
                                     "--output-dir", dir.string(),
                                     "--",           kWorker,
                                     "--steps",      "4",
                                     "--work-ms",    std::to_string(work_ms)};
    if (train) {
      argv.insert(argv.end(), {"--train", (dir / "meet").string(), "--world", "2", "--rank",
                               std::to_string(rank)});
    }
    started.push_back(nsel::test::start(argv, policy_window()));
  }
  for (const auto& s : started) {
    const auto r = nsel::test::finish(s);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
}

}  // namespace

TEST(Identity, TheRankGivenAtLaunchIsShownByEveryCommand) {
  const fs::path dir = make_temp_dir("identity");
  fs::create_directories(dir / "a" / "meet");
  fs::create_directories(dir / "b" / "meet");
  run_two_ranks(dir / "a", 30, true);
  run_two_ranks(dir / "b", 60, true);

  std::map<long long, long long> pid_of_rank;  // in run a
  for (const fs::path& file : nsel::test::files_in(dir / "a")) {
    if (file.string().size() < 10 || file.string().rfind(".nsel.json") != file.string().size() - 10)
      continue;
    const auto manifest = nlohmann::json::parse(nsel::test::slurp(file));
    ASSERT_TRUE(manifest["rank"].is_number_integer()) << manifest.dump();
    EXPECT_EQ(manifest["local_rank"], manifest["rank"]);
    EXPECT_TRUE(manifest["node"].is_null()) << "the host name is not a given node";
    pid_of_rank[manifest["rank"].get<long long>()] = manifest["pid"].get<long long>();
  }
  ASSERT_EQ(pid_of_rank.size(), 2u);

  const auto ls = nsel::test::run({kNsel, "ls", "--json", (dir / "a").string()}, {});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  std::set<long long> ls_ranks;
  const auto listed = nlohmann::json::parse(ls.out);
  for (const auto& report : listed["reports"]) {
    ls_ranks.insert(report["rank"].get<long long>());
  }
  EXPECT_EQ(ls_ranks, (std::set<long long>{0, 1})) << ls.out;

  const auto check = nsel::test::run({kNsel, "check", "--json", (dir / "a").string()}, {});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  std::set<long long> check_ranks;
  const auto checked = nlohmann::json::parse(check.out);
  for (const auto& report : checked["reports"]) {
    check_ranks.insert(report["rank"].get<long long>());
  }
  EXPECT_EQ(check_ranks, (std::set<long long>{0, 1})) << check.out;

  const auto diff =
      nsel::test::run({kNsel, "diff", (dir / "a").string(), (dir / "b").string()}, {});
  EXPECT_NE((diff.out + diff.err).find("paired by worker,rank"), std::string::npos) << diff.err;
  for (const auto& [rank, pid] : pid_of_rank) {
    const std::string row_start =
        kPolicy + " rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + " -> ";
    EXPECT_NE(diff.out.find(row_start), std::string::npos) << row_start << "\n" << diff.out;
  }
  EXPECT_EQ(diff.out.find("by order"), std::string::npos) << diff.out;
  fs::remove_all(dir);
}

TEST(RangeNote, AReportWhoseStepsHoldNoRangeSaysWhy) {
  const fs::path dir = make_temp_dir("range-note");
  fs::create_directories(dir / "bare");
  fs::create_directories(dir / "trained" / "meet");
  run_two_ranks(dir / "bare", 20, false);
  run_two_ranks(dir / "trained", 20, true);
  const auto bare = nsel::test::run({kNsel, "report", (dir / "bare").string()}, {});
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.out.find("  Note: its 2 steps hold no NVTX range inside: the program marks none, "
                          "or its ranges were not recorded (the 'nvtx' Python package 0.2.17"),
            std::string::npos)
      << bare.out;
  const auto json = nsel::test::run({kNsel, "report", "--json", (dir / "bare").string()}, {});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto summary = nlohmann::json::parse(json.out);
  ASSERT_EQ(summary["processes"].size(), 2u) << json.out;
  for (const auto& process : summary["processes"]) {
    EXPECT_TRUE(process["steps_without_ranges"].is_string()) << process.dump();
  }
  const auto trained = nsel::test::run({kNsel, "report", (dir / "trained").string()}, {});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  EXPECT_EQ(trained.out.find("Note: its"), std::string::npos) << trained.out;
  fs::remove_all(dir);
}

TEST(RayDemo, AnInterpreterThatCannotRunTheRayJobIsNamed) {
  const fs::path dir = make_temp_dir("ray-demo");
  const auto missing = nsel::test::run({kNsel, "demo", "--ray", "--root", (dir / "root").string()},
                                       {{"NSEL_PYTHON", (dir / "no-python").string()}});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nsel: error: nsel demo --ray: the Python interpreter '" +
                             (dir / "no-python").string() +
                             "' (NSEL_PYTHON, else python3 on PATH) is not found"),
            std::string::npos)
      << missing.err;
  EXPECT_FALSE(fs::exists(dir / "root")) << "nothing created before the interpreter is known";
  // A python without nsel's package (a bare folder on PYTHONPATH hides no system package).
  const auto without = nsel::test::run(
      {kNsel, "demo", "--ray", "--root", (dir / "root").string()},
      {{"NSEL_PYTHON", "/usr/bin/python3"}, {"PYTHONPATH", (dir / "empty").string()}});
  EXPECT_EQ(without.exit_code, 1);
  EXPECT_NE(without.err.find("nsel: error: nsel demo --ray: '/usr/bin/python3' could not run the "
                             "Ray job (exit code 1, no result); run the nsel of a virtual "
                             "environment that holds nsel's package and Ray"),
            std::string::npos)
      << without.err;
  fs::remove_all(dir);
}
