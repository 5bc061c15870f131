// End to end with real nsys: several step windows in one session, and rank, local-rank and node
// selection among processes launched together with different rank variables.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nsel/core/manifest.hpp"
#include "nsel/core/rank_selection.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using nsel::test::exported_steps;
using nsel::test::files_in;
using nsel::test::make_temp_dir;
using nsel::test::read_description;

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kWorker = NSEL_WORKER_BINARY;
const std::string kPolicy = "dtensor_policy_worker";

using Env = std::map<std::string, std::string>;

Env policy_steps(const std::string& range) {
  return {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", range}};
}

std::vector<std::string> exec_argv(const fs::path& dir, const std::string& tag, int steps,
                                   const std::vector<std::string>& flags = {}) {
  std::vector<std::string> argv = {kNsel,   "exec",         "--worker",
                                   kPolicy, "--output-dir", (dir / "reports").string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  const std::vector<std::string> program = {
      "--",        kWorker, "--steps",    std::to_string(steps),
      "--work-ms", "40",    "--describe", (dir / (tag + ".txt")).string()};
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::path& file : files_in(dir)) {
    if (file.extension() == ".nsys-rep") names.push_back(file.filename().string());
  }
  return names;
}

bool has_line(const std::string& text, const std::string& wanted) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line == wanted) return true;
  }
  return false;
}

// Every rank and local-rank variable empty (which counts as unset), so that nothing from the
// test runner's own environment leaks into the identity of a launched process.
Env no_rank_variables() {
  Env env;
  for (std::string_view name : nsel::kRankVariables) env[std::string(name)] = "";
  for (std::string_view name : nsel::kLocalRankVariables) env[std::string(name)] = "";
  return env;
}

// A process started through `nsel exec`, running alongside the others.
struct Launched {
  std::string tag;
  nsel::test::RunResult result;
  std::map<std::string, std::string> description;
};

// Starts each (tag, extra environment, flags) at once, waits for all, reads their descriptions.
std::vector<Launched> launch_together(
    const fs::path& dir, const Env& common,
    const std::vector<std::tuple<std::string, Env, std::vector<std::string>>>& processes) {
  std::vector<nsel::test::Started> started;
  for (const auto& [tag, own, flags] : processes) {
    Env env = no_rank_variables();
    for (const auto& [name, value] : common) env[name] = value;
    for (const auto& [name, value] : own) env[name] = value;
    started.push_back(nsel::test::start(exec_argv(dir, tag, 5, flags), env));
    // Nsight Systems 2022.4 sometimes fails to start when another nsys starts at the same moment
    // ("Local Endpoint is not available", sem_open ENOENT): the next one starts once this one's
    // program runs (it writes its description first thing), and all of them still run together.
    for (int waited_ms = 0; waited_ms < 20000 && !fs::exists(dir / (tag + ".txt"));
         waited_ms += 20) {
      usleep(20 * 1000);
    }
  }
  std::vector<Launched> launched;
  for (size_t i = 0; i < started.size(); ++i) {
    const std::string& tag = std::get<0>(processes[i]);
    launched.push_back({tag, nsel::test::finish(started[i]), {}});
    launched.back().description = read_description(dir / (tag + ".txt"));
  }
  return launched;
}

// Ran under nsys, and left exactly its own report holding steps 2 and 3.
void expect_profiled(const Launched& process, const fs::path& reports) {
  SCOPED_TRACE(process.tag);
  ASSERT_EQ(process.result.exit_code, 0) << process.result.err;
  const std::string pid = process.description.at("pid");
  EXPECT_NE(pid, std::to_string(process.result.pid));
  EXPECT_NE(process.description.at("parent_exe").find("nsys"), std::string::npos);
  const fs::path report = reports / (kPolicy + "_2:4_" + pid + ".nsys-rep");
  ASSERT_TRUE(fs::exists(report));
  EXPECT_EQ(exported_steps(report), (std::vector<long long>{2, 3}));
}

// Ran bare: nsel replaced itself with the program (same process id), no nsys, no report.
void expect_bare(const Launched& process, const fs::path& reports) {
  SCOPED_TRACE(process.tag);
  ASSERT_EQ(process.result.exit_code, 0) << process.result.err;
  EXPECT_EQ(process.result.err, "");  // left out by its rank or node: not a word
  const std::string pid = process.description.at("pid");
  EXPECT_EQ(pid, std::to_string(process.result.pid));
  EXPECT_EQ(process.description.at("parent_exe").find("nsys"), std::string::npos);
  EXPECT_EQ(process.description.at("ld_preload"), "");
  for (const std::string& name : names_in(reports)) {
    EXPECT_EQ(name.find("_" + pid + "."), std::string::npos) << name;
  }
}

}  // namespace

// Runs the example worker for `steps` steps with the step range `range`; its stderr, its process
// id, and each report left with the steps it holds.
struct WindowsRun {
  nsel::test::RunResult result;
  std::string pid;
  fs::path reports;
  std::map<std::string, std::vector<long long>> steps_by_report;
  std::map<std::string, nsel::Manifest> manifest_by_report;  // the manifest beside each report
  size_t files = 0;                                          // everything in the reports folder
};

WindowsRun run_windows(const std::string& label, int steps, const std::string& range) {
  const fs::path dir = make_temp_dir(label);
  WindowsRun out;
  // nsys, started while other tests start theirs, now and then never starts the program (its
  // start-up failure, see docs/nsys-facts.md): once more then, said aloud; a report lost is not
  // retried.
  for (int attempt = 1;; ++attempt) {
    out.result = nsel::test::run(exec_argv(dir, "run", steps), policy_steps(range));
    if (fs::exists(dir / "run.txt") || attempt == 3) break;
    std::printf("[ retry ] nsys did not start the program:\n%s\n", out.result.err.c_str());
    fs::remove_all(dir / "reports");
  }
  if (!fs::exists(dir / "run.txt")) {
    ADD_FAILURE() << "the program never started, 3 times:\n" << out.result.err;
    return out;
  }
  out.pid = read_description(dir / "run.txt").at("pid");
  out.reports = dir / "reports";
  out.files = nsel::test::files_in(out.reports).size();  // before the exports join them
  for (const std::string& name : names_in(out.reports)) {
    out.steps_by_report[name] = exported_steps(out.reports / name);
    std::ifstream in(nsel::manifest_path_for(out.reports / name));
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    out.manifest_by_report[name] = nsel::parse_manifest(text, name);
  }
  fs::remove_all(dir);
  return out;
}

TEST(Windows, TwoWindowsGiveTwoReportsEachHoldingItsOwnSteps) {
  const WindowsRun r = run_windows("windows", 9, "2:4,6:8");
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  // One nsys session, the contract's log line as for one window.
  EXPECT_TRUE(has_line(r.result.err,
                       "Nsight profiling enabled for worker 'dtensor_policy_worker' "
                       "(matched pattern '*policy*')"))
      << r.result.err;
  const std::string second = kPolicy + "_6:8_" + r.pid + ".nsys-rep";
  EXPECT_EQ(r.steps_by_report,
            (std::map<std::string, std::vector<long long>>{
                {kPolicy + "_2:4_" + r.pid + ".nsys-rep", {2, 3}}, {second, {6, 7}}}));
  EXPECT_TRUE(
      has_line(r.result.err, "nsel: report of window 6:8: " + (r.reports / second).string()));
  // Each window's report has its own manifest, naming its own window; the session's is gone.
  for (const auto& [name, manifest] : r.manifest_by_report) {
    EXPECT_EQ(fs::path(manifest.report), r.reports / name);
    EXPECT_EQ(manifest.state, "complete");
    EXPECT_EQ(manifest.step_window, name.substr(kPolicy.size() + 1, 3)) << name;
  }
  EXPECT_EQ(r.files, 4u) << "two reports, two manifests";
}

TEST(Windows, AdjacentWindowsOneOpenAtExitAndOneNeverReached) {
  const WindowsRun r = run_windows("adjacent", 7, "2:4,4:5,6:30,40:41");
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  // 4:5 opens as 2:4 closes; 6:30 is still open when the program exits, so it holds the steps up
  // to the end; 40:41 never came. No numbered report is left behind.
  EXPECT_EQ(r.steps_by_report, (std::map<std::string, std::vector<long long>>{
                                   {kPolicy + "_2:4_" + r.pid + ".nsys-rep", {2, 3}},
                                   {kPolicy + "_4:5_" + r.pid + ".nsys-rep", {4}},
                                   {kPolicy + "_6:30_" + r.pid + ".nsys-rep", {6, 7}}}));
  EXPECT_TRUE(has_line(r.result.err, "nsel: worker 'dtensor_policy_worker' (process " + r.pid +
                                         ") never reached window 40:41 (the program ended "
                                         "first); no report for it"))
      << r.result.err;
}

TEST(Ranks, RankFilterProfilesExactlyTheChosenRanks) {
  const fs::path dir = make_temp_dir("ranks");
  Env common = policy_steps("2:4");
  common["NSEL_PROFILE_RANKS"] = "0,2-3";
  // Five processes, each finding its rank in a different launcher's variable.
  const auto launched = launch_together(dir, common,
                                        {{"rank0", {{"RANK", "0"}}, {}},
                                         {"rank1", {{"SLURM_PROCID", "1"}}, {}},
                                         {"rank2", {{"OMPI_COMM_WORLD_RANK", "2"}}, {}},
                                         {"rank3", {{"PMI_RANK", "3"}}, {}},
                                         {"rank4", {{"PMIX_RANK", "4"}}, {}}});
  const fs::path reports = dir / "reports";
  expect_profiled(launched[0], reports);
  expect_bare(launched[1], reports);
  expect_profiled(launched[2], reports);
  expect_profiled(launched[3], reports);
  expect_bare(launched[4], reports);
  EXPECT_EQ(names_in(reports).size(), 3u);

  // A flag wins over the variables: RANK says 0, --rank says 1, so it runs bare.
  Env env = no_rank_variables();
  for (const auto& [name, value] : common) env[name] = value;
  env["RANK"] = "0";
  const auto flagged = nsel::test::run(exec_argv(dir, "flag", 2, {"--rank", "1"}), env);
  ASSERT_EQ(flagged.exit_code, 0) << flagged.err;
  EXPECT_EQ(read_description(dir / "flag.txt").at("pid"), std::to_string(flagged.pid));

  // No rank anywhere: not profiled, and it says why on stderr.
  env["RANK"] = "";
  const auto unknown = nsel::test::run(exec_argv(dir, "unknown", 2), env);
  ASSERT_EQ(unknown.exit_code, 0) << unknown.err;
  EXPECT_EQ(unknown.err,
            "nsel: warning: worker 'dtensor_policy_worker' matched pattern '*policy*' but is not "
            "profiled: NSEL_PROFILE_RANKS='0,2-3' is set but the rank is unknown: none of RANK, "
            "SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, MV2_COMM_WORLD_RANK is set "
            "and none was given\n");
  EXPECT_EQ(read_description(dir / "unknown.txt").at("pid"), std::to_string(unknown.pid));
  EXPECT_EQ(names_in(reports).size(), 3u);
  fs::remove_all(dir);
}

TEST(Ranks, NodeAndLocalRankFiltersProfileExactlyOneProcess) {
  const fs::path dir = make_temp_dir("nodes");
  Env common = policy_steps("2:4");
  common["NSEL_PROFILE_NODES"] = "n[13]";
  common["NSEL_PROFILE_LOCAL_RANKS"] = "0";
  const auto launched =
      launch_together(dir, common,
                      {{"n1-local0", {{"LOCAL_RANK", "0"}}, {"--node", "n1"}},
                       {"n1-local1", {{"SLURM_LOCALID", "1"}}, {"--node", "n1"}},
                       {"n2-local0", {{"LOCAL_RANK", "0"}}, {"--node", "n2"}},
                       {"n2-local1", {{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}, {"--node", "n2"}}});
  const fs::path reports = dir / "reports";
  expect_profiled(launched[0], reports);
  expect_bare(launched[1], reports);
  expect_bare(launched[2], reports);
  expect_bare(launched[3], reports);
  EXPECT_EQ(names_in(reports).size(), 1u);
  fs::remove_all(dir);
}

TEST(RankPlan, OneLinePerWorkerAndRank) {
  Env env = policy_steps("2:4");
  env["NSEL_PROFILE_RANKS"] = "1,3";
  env["NSEL_CAPTURE"] = "nvtx";
  const auto r =
      nsel::test::run({kNsel, "plan", "--json", "--ranks", "0-3", kPolicy, "vllm_x"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> rows;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 8u);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(rows[rank]["worker"], kPolicy);
    EXPECT_EQ(rows[rank]["rank"]["value"], rank);
    EXPECT_EQ(rows[rank]["rank"]["source"], "--ranks");
    EXPECT_EQ(rows[rank]["profile"], rank == 1 || rank == 3) << rank;
    EXPECT_EQ(rows[4 + rank]["profile"], false);
  }
  EXPECT_EQ(rows[0]["reason"], "rank 0 (from --ranks) is not in NSEL_PROFILE_RANKS='1,3'");
  EXPECT_EQ(rows[1]["reports"], nlohmann::json::array({kPolicy + "_2:4_<PID>.nsys-rep"}));

  const auto human = nsel::test::run({kNsel, "plan", "--ranks", "0-1", kPolicy}, env);
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_EQ(human.out,
            "dtensor_policy_worker rank 0: not profiled (rank 0 (from --ranks) is not in "
            "NSEL_PROFILE_RANKS='1,3')\n"
            "dtensor_policy_worker rank 1: profiled (matched pattern '*policy*'; rank 1 (from "
            "--ranks) is in NSEL_PROFILE_RANKS='1,3')\n");

  // Without --node, the node is this machine's host name.
  env["NSEL_PROFILE_NODES"] = "*";
  const auto node = nsel::test::run({kNsel, "plan", "--json", "--rank", "1", kPolicy}, env);
  ASSERT_EQ(node.exit_code, 0) << node.err;
  const auto plan = nlohmann::json::parse(node.out);
  EXPECT_EQ(plan["node"]["source"], "host name");
  EXPECT_FALSE(plan["node"]["value"].get<std::string>().empty());
  EXPECT_EQ(plan["profile"], true);
}

TEST(RankDemo, RanksShowsRankSelection) {
  const fs::path root = make_temp_dir("rank-demo");
  const auto r = nsel::test::run({kNsel, "demo", "--ranks", "4", "--steps", "4", "--work-ms", "40",
                                  "--root", root.string(), "--json"},
                                 {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has_line(r.err,
                       "nsel demo: --ranks is given and NSEL_PROFILE_RANKS is not set; using '0' "
                       "(set it to choose other ranks)"))
      << r.err;
  const auto out = nlohmann::json::parse(r.out);
  ASSERT_EQ(out["workers"].size(), 5u);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(out["workers"][rank]["rank"], rank);
    EXPECT_EQ(out["workers"][rank]["profiled"], rank == 0);
  }
  ASSERT_EQ(out["reports"].size(), 1u) << r.out;
  EXPECT_EQ(out["reports"][0]["steps"], nlohmann::json::array({2, 3}));
  fs::remove_all(root);
}

// --- bad values of the new variables and flags: exit 2, one exact line, nothing written ---------

struct BadSelection {
  Env env;
  std::vector<std::string> flags;
  std::string message;
};

void PrintTo(const BadSelection& bad, std::ostream* out) {
  *out << bad.message.substr(0, bad.message.find('='));
}

class BadSelections : public ::testing::TestWithParam<BadSelection> {};

TEST_P(BadSelections, ExitTwoWithOneLineAndNothingWritten) {
  const BadSelection& bad = GetParam();
  std::vector<std::string> plan = {kNsel, "plan"};
  plan.insert(plan.end(), bad.flags.begin(), bad.flags.end());
  plan.push_back(kPolicy);
  const auto p = nsel::test::run(plan, bad.env);
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_EQ(p.err, "nsel: error: " + bad.message + "\n");
  EXPECT_EQ(p.out, "");

  const fs::path dir = make_temp_dir("bad-selection");
  const auto e = nsel::test::run(exec_argv(dir, "ran", 1, bad.flags), bad.env);
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_EQ(e.err, "nsel: error: " + bad.message + "\n");
  EXPECT_FALSE(fs::exists(dir / "reports")) << "nothing may be written on bad input";
  EXPECT_FALSE(fs::exists(dir / "ran.txt")) << "the worker must not start on bad input";
  fs::remove_all(dir);
}

Env with(Env env, const std::string& name, const std::string& value) {
  env[name] = value;
  return env;
}

const std::string kRanksForm =
    "; expected ranks and inclusive ranges separated by commas, for example '0,8-15' (whole "
    "numbers >= 0)";

INSTANTIATE_TEST_SUITE_P(
    RanksNodesWindows, BadSelections,
    ::testing::Values(
        BadSelection{with(policy_steps("2:4"), "NSEL_PROFILE_RANKS", "0,x"),
                     {},
                     "NSEL_PROFILE_RANKS='0,x': 'x' is not a whole number >= 0" + kRanksForm},
        BadSelection{
            with(policy_steps("2:4"), "NSEL_PROFILE_LOCAL_RANKS", "3-1"),
            {},
            "NSEL_PROFILE_LOCAL_RANKS='3-1': range '3-1' is reversed (3 > 1)" + kRanksForm},
        BadSelection{with(policy_steps("2:4"), "NSEL_PROFILE_NODES", ","),
                     {},
                     "NSEL_PROFILE_NODES=',': no pattern in it; expected comma-separated "
                     "host-name patterns, for example 'node0[0-3],gpu-*'"},
        BadSelection{{{"NSEL_PROFILE_NODES", "n1"}},
                     {},
                     "NSEL_PROFILE_NODES='n1' narrows the workers selected by "
                     "NRL_NSYS_WORKER_PATTERNS and NRL_NSYS_PROFILE_STEP_RANGE, which are not "
                     "set; set them too (for example NRL_NSYS_WORKER_PATTERNS='*' "
                     "NRL_NSYS_PROFILE_STEP_RANGE='2:4') or unset NSEL_PROFILE_NODES"},
        BadSelection{policy_steps("2:4,3:5"),
                     {},
                     "NRL_NSYS_PROFILE_STEP_RANGE='2:4,3:5': window 2 '3:5' starts before "
                     "window 1 '2:4' stops (windows must be increasing and must not overlap); "
                     "expected comma-separated 'start:stop' windows with whole numbers 1 <= "
                     "start < stop, each starting at or after the previous one's stop, for "
                     "example '2:4,10:12' (steps 2, 3, 10 and 11)"},
        BadSelection{policy_steps("2:4"),
                     {"--rank", "one"},
                     "--rank='one': not a whole number >= 0; expected a whole number >= 0, for "
                     "example '3'"},
        BadSelection{policy_steps("2:4"),
                     {"--local-rank", "-1"},
                     "--local-rank='-1': not a whole number >= 0; expected a whole number >= 0, "
                     "for example '3'"},
        BadSelection{policy_steps("2:4"),
                     {"--node", ""},
                     "--node='': empty node name; expected the node's name as "
                     "NSEL_PROFILE_NODES patterns see it, for example 'node07'"}));

// Every positional value reaches nsel as typed. CLI11 alone reads a many-valued positional
// written "[0]" as 0 and "[a,b]" as a and b; nsel undoes that, for every subcommand.
TEST(Positionals, WorkerNamesReachNselPlanByteForByte) {
  const std::vector<std::string> names = {
      "[0]",   "[a,b]", "[]",     "[,]",   "{x}",     "{a,b}",   "-",
      "a,b",   "[0",    "0]",     " [0] ", "\x1f[0]", "\x1f",    "\x1f\x1f[x]",
      "[[0]]", "[ ]",   "[é,中]", "[\n]",  "'[0]'",   "\"[0]\"", "dtensor_policy_worker",
      "exec",  "=[0]"};
  std::vector<std::string> argv = {kNsel, "plan", "--json"};
  argv.insert(argv.end(), names.begin(), names.end());
  const auto r = nsel::test::run(argv, policy_steps("2:4"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> got;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);) {
    got.push_back(nlohmann::json::parse(line).at("worker").get<std::string>());
  }
  EXPECT_EQ(got, names);
  // A pattern for the bracketed name selects it, as fnmatch would ('[[]0]' matches "[0]").
  const auto matched = nsel::test::run(
      {kNsel, "plan", "--json", "[0]"},
      {{"NRL_NSYS_WORKER_PATTERNS", "[[]0]"}, {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}});
  ASSERT_EQ(matched.exit_code, 0) << matched.err;
  EXPECT_TRUE(nlohmann::json::parse(matched.out).at("profile").get<bool>()) << matched.out;
  EXPECT_NE(matched.err.find("Nsight profiling enabled for worker '[0]' (matched pattern '[[]0]')"),
            std::string::npos)
      << matched.err;
}

TEST(Positionals, BracketedValuesReachEveryCommandAndFlagAsTyped) {
  // Folders are positionals of ls, recover and report: a bracketed one is looked up as typed.
  for (const std::string command : {"ls", "recover", "report"}) {
    const auto r = nsel::test::run({kNsel, command, "[no,such]"}, {});
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err;
    EXPECT_NE(r.err.find("'[no,such]'"), std::string::npos) << command << ": " << r.err;
  }
  // A flag's value too, and a word CLI11 does not expect is quoted as typed (no mark left).
  const auto flag = nsel::test::run({kNsel, "plan", "--json", "--node", "[n1]", kPolicy}, {});
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(nlohmann::json::parse(flag.out).at("node").at("value"), "[n1]") << flag.out;
  const auto extra = nsel::test::run({kNsel, "ray", "patch", "[x]"}, {});
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_NE(extra.err.find("not expected: [x];"), std::string::npos) << extra.err;
}
