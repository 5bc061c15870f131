// Rank, local-rank and node selection; several step windows: parsing and the plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "nsel/core/error.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/rank_selection.hpp"
#include "nsel/core/settings.hpp"

using nsel::StepWindow;

namespace {

using Env = std::map<std::string, std::string>;

nsel::EnvLookup lookup_in(Env values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

// The message of the nsel::Error `call` throws (exit code 2), or "" when it throws none.
template <typename Call>
std::string error_of(Call call) {
  try {
    call();
  } catch (const nsel::Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  return "";
}

const std::string kListForm =
    "; expected comma-separated 'start:stop' windows with whole numbers 1 <= start < stop, each "
    "starting at or after the previous one's stop, for example '2:4,10:12' (steps 2, 3, 10 and "
    "11)";
const std::string kRankForm =
    "; expected ranks and inclusive ranges separated by commas, for example '0,8-15' (whole "
    "numbers >= 0)";

std::string windows_error(const std::string& value) {
  return error_of([&] { nsel::parse_step_windows(value); });
}

std::string settings_error(Env env) {
  return error_of([&] { nsel::ProfileSettings::from_environment(lookup_in(std::move(env))); });
}

Env selected(const std::string& range = "2:4") {
  return {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", range}};
}

}  // namespace

// --- several windows -------------------------------------------------------------------------

TEST(StepWindows, OneWindowIsExactlyTheContract) {
  EXPECT_EQ(nsel::parse_step_windows(" 5:10 "), (std::vector<StepWindow>{{5, 10}}));
  // Without a comma, the errors are the contract's own, word for word.
  EXPECT_EQ(windows_error("0:10"), error_of([] { nsel::parse_step_window("0:10"); }));
  EXPECT_EQ(windows_error("5"), error_of([] { nsel::parse_step_window("5"); }));
}

TEST(StepWindows, SeveralIncreasingWindows) {
  EXPECT_EQ(nsel::parse_step_windows("2:4, 10:12 ,20:21"),
            (std::vector<StepWindow>{{2, 4}, {10, 12}, {20, 21}}));
  // A window may start at the previous one's stop.
  EXPECT_EQ(nsel::parse_step_windows("2:4,4:6"), (std::vector<StepWindow>{{2, 4}, {4, 6}}));
  EXPECT_EQ(nsel::windows_text({{2, 4}, {10, 12}}), "2:4,10:12");
}

TEST(StepWindows, OverlapOrderAndBadItemsAreNamed) {
  EXPECT_EQ(windows_error("2:4,3:5"),
            "NRL_NSYS_PROFILE_STEP_RANGE='2:4,3:5': window 2 '3:5' starts before window 1 '2:4' "
            "stops (windows must be increasing and must not overlap)" +
                kListForm);
  EXPECT_EQ(windows_error("10:12,2:4"),
            "NRL_NSYS_PROFILE_STEP_RANGE='10:12,2:4': window 2 '2:4' starts before window 1 "
            "'10:12' stops (windows must be increasing and must not overlap)" +
                kListForm);
  EXPECT_EQ(windows_error("2:4,"),
            "NRL_NSYS_PROFILE_STEP_RANGE='2:4,': window 2 is empty" + kListForm);
  EXPECT_EQ(windows_error("2:4,a:b"),
            "NRL_NSYS_PROFILE_STEP_RANGE='2:4,a:b': window 2 'a:b': start 'a' is not a whole "
            "number" +
                kListForm);
  EXPECT_EQ(windows_error("0:1,2:4"),
            "NRL_NSYS_PROFILE_STEP_RANGE='0:1,2:4': window 1 '0:1': start must be >= 1 (steps "
            "are 1-based)" +
                kListForm);
  EXPECT_EQ(windows_error("2:4,6:6"),
            "NRL_NSYS_PROFILE_STEP_RANGE='2:4,6:6': window 2 '6:6': empty range (stop must be "
            "greater than start; stop is exclusive)" +
                kListForm);
}

// --- rank lists, identity ----------------------------------------------------------------------

TEST(RankList, RanksAndInclusiveRanges) {
  const auto list = nsel::RankList::parse("0, 8-10", "NSEL_PROFILE_RANKS");
  for (long long rank : {0, 8, 9, 10}) EXPECT_TRUE(list.contains(rank)) << rank;
  for (long long rank : {1, 7, 11}) EXPECT_FALSE(list.contains(rank)) << rank;
  EXPECT_EQ(list.expand("--ranks"), (std::vector<long long>{0, 8, 9, 10}));
  EXPECT_EQ(error_of([] { nsel::RankList::parse("0-100000", "--ranks").expand("--ranks", 10); }),
            "--ranks='0-100000': more than 10 ranks to show; expected at most 10 ranks, for "
            "example '0-7'");
}

TEST(RankList, BadValuesAreNamed) {
  const auto rank_error = [](const std::string& value) {
    return error_of([&] { nsel::RankList::parse(value, "NSEL_PROFILE_RANKS"); });
  };
  EXPECT_EQ(rank_error("a"), "NSEL_PROFILE_RANKS='a': 'a' is not a whole number >= 0" + kRankForm);
  EXPECT_EQ(rank_error("5-3"),
            "NSEL_PROFILE_RANKS='5-3': range '5-3' is reversed (5 > 3)" + kRankForm);
  EXPECT_EQ(rank_error("-1"),
            "NSEL_PROFILE_RANKS='-1': range '-1' lacks its first rank" + kRankForm);
  EXPECT_EQ(rank_error("1-"),
            "NSEL_PROFILE_RANKS='1-': range '1-' lacks its last rank" + kRankForm);
  EXPECT_EQ(rank_error("0,,2"), "NSEL_PROFILE_RANKS='0,,2': item 2 is empty" + kRankForm);
  EXPECT_EQ(rank_error("1-x"),
            "NSEL_PROFILE_RANKS='1-x': 'x' is not a whole number >= 0" + kRankForm);
  EXPECT_EQ(
      rank_error("99999999999999999999"),
      "NSEL_PROFILE_RANKS='99999999999999999999': '99999999999999999999' is too large" + kRankForm);
  EXPECT_EQ(error_of([] { nsel::parse_rank("x", "--rank"); }),
            "--rank='x': not a whole number >= 0; expected a whole number >= 0, for example '3'");
  EXPECT_EQ(nsel::parse_rank(" 12 ", "--rank"), 12);
}

TEST(Identity, FlagsFirstThenTheVariablesInOrder) {
  const Env env = {{"SLURM_PROCID", "5"},
                   {"OMPI_COMM_WORLD_RANK", "6"},
                   {"RANK", ""},
                   {"SLURM_LOCALID", "1"},
                   {"MPI_LOCALRANKID", "2"}};
  auto identity = nsel::identify_process(lookup_in(env), {}, "node7");
  // An empty RANK counts as unset; SLURM_PROCID comes before OMPI_COMM_WORLD_RANK.
  EXPECT_EQ(identity.rank.value, 5);
  EXPECT_EQ(identity.rank.source, "SLURM_PROCID");
  EXPECT_EQ(identity.local_rank.value, 1);
  EXPECT_EQ(identity.local_rank.source, "SLURM_LOCALID");
  EXPECT_EQ(identity.node.value, "node7");
  EXPECT_EQ(identity.node.source, "host name");

  nsel::IdentityOverrides given;
  given.rank = 9;
  given.node = "n2";
  identity = nsel::identify_process(lookup_in(env), given, "node7");
  EXPECT_EQ(identity.rank.value, 9);
  EXPECT_EQ(identity.rank.source, "the caller");
  EXPECT_EQ(identity.node.value, "n2");

  for (const auto& [name, value] : std::map<std::string, std::string>{
           {"RANK", "1"}, {"OMPI_COMM_WORLD_RANK", "2"}, {"PMI_RANK", "3"}, {"PMIX_RANK", "4"}}) {
    EXPECT_EQ(nsel::identify_process(lookup_in({{name, value}}), {}, "").rank.source, name);
  }
}

TEST(Identity, AMalformedVariableIsAProblemNotAFallThrough) {
  const auto identity =
      nsel::identify_process(lookup_in({{"RANK", "abc"}, {"SLURM_PROCID", "3"}}), {}, "");
  EXPECT_FALSE(identity.rank.value);
  EXPECT_EQ(identity.rank.problem, "RANK='abc' is not a whole number >= 0");
  EXPECT_FALSE(identity.local_rank.value);
  EXPECT_EQ(identity.local_rank.source, "");
}

// --- settings ---------------------------------------------------------------------------------

TEST(SelectionSettings, FiltersNeedTheSelectionTheyNarrow) {
  EXPECT_EQ(settings_error({{"NSEL_PROFILE_RANKS", "0"}}),
            "NSEL_PROFILE_RANKS='0' narrows the workers selected by NRL_NSYS_WORKER_PATTERNS and "
            "NRL_NSYS_PROFILE_STEP_RANGE, which are not set; set them too (for example "
            "NRL_NSYS_WORKER_PATTERNS='*' NRL_NSYS_PROFILE_STEP_RANGE='2:4') or unset "
            "NSEL_PROFILE_RANKS");
  Env nodes = selected();
  nodes["NSEL_PROFILE_NODES"] = " , ";
  EXPECT_EQ(settings_error(nodes),
            "NSEL_PROFILE_NODES=' , ': no pattern in it; expected comma-separated host-name "
            "patterns, for example 'node0[0-3],gpu-*'");
  Env local = selected();
  local["NSEL_PROFILE_LOCAL_RANKS"] = "1-0";
  EXPECT_EQ(settings_error(local),
            "NSEL_PROFILE_LOCAL_RANKS='1-0': range '1-0' is reversed (1 > 0)" + kRankForm);
}

TEST(SelectionSettings, AbsentFiltersLeaveTheContractAlone) {
  const auto settings = nsel::ProfileSettings::from_environment(lookup_in(selected()));
  EXPECT_FALSE(settings.ranks);
  EXPECT_FALSE(settings.local_ranks);
  EXPECT_FALSE(settings.nodes);
  EXPECT_EQ(settings.windows, (std::vector<StepWindow>{{2, 4}}));
}

// --- plan -------------------------------------------------------------------------------------

namespace {

nsel::WorkerPlan plan_for(Env env, const Env& identity_env = {}, nsel::IdentityOverrides given = {},
                          const std::string& host = "node1") {
  const auto settings = nsel::ProfileSettings::from_environment(lookup_in(std::move(env)));
  nsel::PlanRequest request;
  request.worker = "dtensor_policy_worker";
  request.output_dir = "/out";
  request.program = {"/bin/prog"};
  request.identity = nsel::identify_process(lookup_in(identity_env), given, host);
  request.report_tag = "nsel42";
  return nsel::plan_worker(settings, request);
}

}  // namespace

TEST(SelectionPlan, RankFilterSaysWhyForEachRank) {
  Env env = selected();
  env["NSEL_PROFILE_RANKS"] = "0,8-15";
  auto in = plan_for(env, {{"RANK", "9"}});
  EXPECT_TRUE(in.profile);
  EXPECT_EQ(in.reason,
            "matched pattern '*policy*'; rank 9 (from RANK) is in NSEL_PROFILE_RANKS='0,8-15'");
  EXPECT_EQ(in.log_line(),
            "Nsight profiling enabled for worker 'dtensor_policy_worker' (matched pattern "
            "'*policy*')");
  auto out = plan_for(env, {{"SLURM_PROCID", "3"}});
  EXPECT_FALSE(out.profile);
  EXPECT_EQ(out.reason, "rank 3 (from SLURM_PROCID) is not in NSEL_PROFILE_RANKS='0,8-15'");
  EXPECT_EQ(out.notice, "");  // deliberately left out: nothing to warn about
  EXPECT_EQ(out.command, (std::vector<std::string>{"/bin/prog"}));
}

TEST(SelectionPlan, UnknownRankIsNotProfiledAndSaysSo) {
  Env env = selected();
  env["NSEL_PROFILE_RANKS"] = "0";
  const auto plan = plan_for(env);
  EXPECT_FALSE(plan.profile);
  EXPECT_EQ(plan.reason,
            "NSEL_PROFILE_RANKS='0' is set but the rank is unknown: none of RANK, SLURM_PROCID, "
            "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, MV2_COMM_WORLD_RANK is set and none was "
            "given");
  EXPECT_EQ(plan.notice,
            "nsel: warning: worker 'dtensor_policy_worker' matched pattern '*policy*' but is not "
            "profiled: " +
                plan.reason);
  const auto malformed = plan_for(env, {{"RANK", "x1"}});
  EXPECT_EQ(malformed.reason,
            "NSEL_PROFILE_RANKS='0' is set but the rank is unknown: RANK='x1' is not a whole "
            "number >= 0");
  // An unmatched worker is not concerned, so nothing is said about its rank.
  Env other = env;
  other["NRL_NSYS_WORKER_PATTERNS"] = "*vllm*";
  EXPECT_EQ(plan_for(other).notice, "");
}

TEST(SelectionPlan, LocalRankAndNodeFilters) {
  Env env = selected();
  env["NSEL_PROFILE_LOCAL_RANKS"] = "0";
  env["NSEL_PROFILE_NODES"] = "gpu-[0-3], login";
  const auto in = plan_for(env, {{"LOCAL_RANK", "0"}}, {}, "gpu-2");
  EXPECT_TRUE(in.profile);
  EXPECT_EQ(in.reason,
            "matched pattern '*policy*'; node 'gpu-2' (from host name) matches "
            "NSEL_PROFILE_NODES pattern 'gpu-[0-3]'; local rank 0 (from LOCAL_RANK) is in "
            "NSEL_PROFILE_LOCAL_RANKS='0'");
  const auto other_node = plan_for(env, {{"LOCAL_RANK", "0"}}, {}, "gpu-7");
  EXPECT_FALSE(other_node.profile);
  EXPECT_EQ(other_node.reason,
            "node 'gpu-7' (from host name) matches no pattern of NSEL_PROFILE_NODES");
  nsel::IdentityOverrides given;
  given.node = "login";
  given.local_rank = 1;
  const auto other_local = plan_for(env, {{"LOCAL_RANK", "0"}}, given, "gpu-2");
  EXPECT_FALSE(other_local.profile);
  EXPECT_EQ(other_local.reason,
            "local rank 1 (from the caller) is not in NSEL_PROFILE_LOCAL_RANKS='0'");
}

TEST(SelectionPlan, OneWindowKeepsTheContractOptions) {
  Env env = selected();
  const auto plain = plan_for(env);
  env["NSEL_PROFILE_RANKS"] = "0-3";
  const auto filtered = plan_for(env, {{"RANK", "1"}});
  ASSERT_TRUE(filtered.profile);
  EXPECT_EQ(filtered.command, plain.command);
  EXPECT_EQ(filtered.environment, plain.environment);
  EXPECT_EQ(filtered.options.get("capture-range-end"), "stop");
  EXPECT_EQ(filtered.options.get("o"), "/out/dtensor_policy_worker_2:4_%p");
  EXPECT_FALSE(filtered.repeated_reports);
}

TEST(SelectionPlan, SeveralWindowsRepeatTheCaptureInOneSession) {
  const auto plan = plan_for(selected("2:4,10:12"));
  ASSERT_TRUE(plan.profile);
  EXPECT_EQ(plan.options.get("capture-range-end"), "repeat:2");
  EXPECT_EQ(plan.options.get("o"), "/out/dtensor_policy_worker_2:4,10:12_%p.nsel42");
  ASSERT_TRUE(plan.repeated_reports);
  EXPECT_EQ(plan.repeated_reports->directory, "/out");
  EXPECT_EQ(plan.repeated_reports->stem, "dtensor_policy_worker_2:4,10:12_");
  EXPECT_EQ(plan.repeated_reports->tag, ".nsel42");
  EXPECT_EQ(plan.environment.back(), "NRL_NSYS_PROFILE_STEP_RANGE=2:4,10:12");
  EXPECT_EQ(plan.windows, (std::vector<StepWindow>{{2, 4}, {10, 12}}));
}

TEST(SelectionPlan, SeveralWindowsWithoutRepeatGiveOneReportForTheSpan) {
  Env env = selected("2:4,10:12");
  env["NSEL_CAPTURE"] = "none";
  nsel::PlanRequest request;
  const auto settings = nsel::ProfileSettings::from_environment(lookup_in(env));
  request.worker = "dtensor_policy_worker";
  request.node_capture = nsel::CaptureMode::none;
  auto plan = nsel::plan_worker(settings, request);
  EXPECT_FALSE(plan.options.has("capture-range-end"));
  EXPECT_EQ(plan.options.get("o"), "dtensor_policy_worker_2:12_%p");
  EXPECT_FALSE(plan.repeated_reports);
  // A capture-range-end or an output name of the user's own wins; nothing is renamed then.
  env.erase("NSEL_CAPTURE");
  env["NRL_NSYS_EXTRA_OPTIONS"] = R"({"capture-range-end": "stop"})";
  plan = plan_for(env);
  EXPECT_EQ(plan.options.get("capture-range-end"), "stop");
  EXPECT_EQ(plan.options.get("o"), "/out/dtensor_policy_worker_2:12_%p");
  env["NRL_NSYS_EXTRA_OPTIONS"] = R"({"o": "mine_%p"})";
  plan = plan_for(env);
  EXPECT_EQ(plan.options.get("capture-range-end"), "repeat:2");
  EXPECT_EQ(plan.options.get("o"), "/out/mine_%p");
  EXPECT_FALSE(plan.repeated_reports);
}
