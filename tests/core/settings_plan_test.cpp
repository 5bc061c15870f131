#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "nsel/core/error.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/settings.hpp"

using nsel::CaptureMode;
using nsel::PlanRequest;
using nsel::ProfileSettings;

namespace {

nsel::EnvLookup env(std::map<std::string, std::string> values) {
  return [values](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

std::string settings_error(std::map<std::string, std::string> values) {
  try {
    ProfileSettings::from_environment(env(std::move(values)));
  } catch (const nsel::Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Settings, NeitherMeansOff) {
  EXPECT_FALSE(ProfileSettings::from_environment(env({})).enabled());
  EXPECT_FALSE(ProfileSettings::from_environment(
                   env({{"NRL_NSYS_WORKER_PATTERNS", ""}, {"NRL_NSYS_PROFILE_STEP_RANGE", ""}}))
                   .enabled());
}

TEST(Settings, BothOrNeither) {
  EXPECT_EQ(settings_error({{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}}),
            "NRL_NSYS_WORKER_PATTERNS='*policy*' is set but NRL_NSYS_PROFILE_STEP_RANGE is not; "
            "set both (for example NRL_NSYS_PROFILE_STEP_RANGE='2:4') or neither");
  EXPECT_EQ(settings_error({{"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}}),
            "NRL_NSYS_PROFILE_STEP_RANGE='2:4' is set but NRL_NSYS_WORKER_PATTERNS is not; set "
            "both (for example NRL_NSYS_WORKER_PATTERNS='*policy*') or neither");
}

TEST(Settings, BadExtraOptionsStopEvenUnselectedWorkers) {
  EXPECT_NE(settings_error({{"NRL_NSYS_WORKER_PATTERNS", "x"},
                            {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"},
                            {"NRL_NSYS_EXTRA_OPTIONS", "{"}}),
            "");
  EXPECT_EQ(settings_error({{"NSEL_CAPTURE", "gpu"}}),
            "NSEL_CAPTURE='gpu': unknown capture mode; expected one of 'auto' (CUDA profiler API "
            "with a GPU, NVTX range without), 'cuda', 'nvtx', 'none'");
}

TEST(Plan, SelectedWorkerGetsContractOptionsAndLogLine) {
  const auto settings = ProfileSettings::from_environment(env(
      {{"NRL_NSYS_WORKER_PATTERNS", "*vllm*, *policy*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}}));
  PlanRequest request{
      "dtensor_policy_worker", CaptureMode::cuda, "/out", {"/bin/prog", "a b"}, "/usr/bin/nsys"};
  const auto plan = nsel::plan_worker(settings, request);
  ASSERT_TRUE(plan.profile);
  EXPECT_EQ(plan.log_line(),
            "Nsight profiling enabled for worker 'dtensor_policy_worker' (matched pattern "
            "'*policy*')");
  EXPECT_EQ(plan.capture, CaptureMode::cuda);
  EXPECT_EQ(plan.command, (std::vector<std::string>{
                              "/usr/bin/nsys", "profile", "-t", "cuda,nvtx", "-s", "none", "-o",
                              "/out/dtensor_policy_worker_2:4_%p", "--stop-on-exit=true",
                              "--capture-range=cudaProfilerApi", "--capture-range-end=stop",
                              "--cuda-graph-trace=node", "/bin/prog", "a b"}));
  EXPECT_EQ(plan.environment, (std::vector<std::string>{"NSEL_STEP_CAPTURE=cuda",
                                                        "NRL_NSYS_PROFILE_STEP_RANGE=2:4"}));
}

TEST(Plan, NvtxNodeSwitchesTheCaptureRange) {
  const auto settings = ProfileSettings::from_environment(
      env({{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}}));
  const auto plan =
      nsel::plan_worker(settings, {"dtensor_policy_worker", CaptureMode::nvtx, "", {}});
  EXPECT_EQ(plan.capture, CaptureMode::nvtx);
  EXPECT_EQ(plan.options.get("capture-range"), "nvtx");
  EXPECT_EQ(plan.options.get("nvtx-capture"), "nsel_capture");
  EXPECT_EQ(plan.options.get("env-var"), "NSYS_NVTX_PROFILER_REGISTER_ONLY=0");
  EXPECT_EQ(plan.options.get("cpuctxsw"), "none");
  EXPECT_EQ(plan.options.get("o"), "dtensor_policy_worker_2:4_%p");  // relative, as in Ray
}

// Whole-run sessions hang as NVTX-range ones do with context-switch tracing on; a value the
// user set still wins.
TEST(Plan, NoCaptureNodeTurnsContextSwitchTracingOff) {
  const auto settings = ProfileSettings::from_environment(
      env({{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}}));
  const auto plan =
      nsel::plan_worker(settings, {"dtensor_policy_worker", CaptureMode::none, "", {"/bin/prog"}});
  EXPECT_EQ(plan.capture, CaptureMode::none);
  EXPECT_FALSE(plan.options.has("capture-range"));
  EXPECT_FALSE(plan.options.has("capture-range-end"));
  EXPECT_EQ(plan.options.get("cpuctxsw"), "none");
  EXPECT_NE(std::find(plan.command.begin(), plan.command.end(), "--cpuctxsw=none"),
            plan.command.end());

  const auto user = ProfileSettings::from_environment(
      env({{"NRL_NSYS_WORKER_PATTERNS", "*policy*"},
           {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"},
           {"NRL_NSYS_EXTRA_OPTIONS", R"({"cpuctxsw": "process-tree"})"}}));
  EXPECT_EQ(nsel::plan_worker(user, {"dtensor_policy_worker", CaptureMode::none, "", {}})
                .options.get("cpuctxsw"),
            "process-tree");
  // The CUDA mode of GPU nodes keeps the contract's options.
  EXPECT_FALSE(nsel::plan_worker(settings, {"dtensor_policy_worker", CaptureMode::cuda, "", {}})
                   .options.has("cpuctxsw"));
}

TEST(Plan, UserCaptureRangeWinsAndTheControllerFollows) {
  const auto settings = ProfileSettings::from_environment(
      env({{"NRL_NSYS_WORKER_PATTERNS", "*policy*"},
           {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"},
           {"NRL_NSYS_EXTRA_OPTIONS", R"({"c": "cudaProfilerApi", "t": "nvtx,osrt"})"}}));
  const auto plan =
      nsel::plan_worker(settings, {"dtensor_policy_worker", CaptureMode::nvtx, "", {}});
  EXPECT_EQ(plan.capture, CaptureMode::cuda);
  EXPECT_EQ(plan.options.get("capture-range"), "cudaProfilerApi");
  EXPECT_EQ(plan.options.get("trace"), "nvtx,osrt");
}

TEST(Plan, UnselectedWorkerRunsBare) {
  const auto settings = ProfileSettings::from_environment(
      env({{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}}));
  const auto plan =
      nsel::plan_worker(settings, {"vllm_generation_worker", CaptureMode::nvtx, "", {"/bin/prog"}});
  EXPECT_FALSE(plan.profile);
  EXPECT_FALSE(plan.pattern.has_value());
  EXPECT_EQ(plan.command, std::vector<std::string>{"/bin/prog"});
  EXPECT_EQ(plan.reason, "no pattern of NRL_NSYS_WORKER_PATTERNS matches");
}

TEST(Plan, ReportNamesNsysCannotFinishAreRefused) {
  const auto lookup = [](std::string_view name) -> std::optional<std::string> {
    if (name == "NRL_NSYS_WORKER_PATTERNS") return "*";
    if (name == "NRL_NSYS_PROFILE_STEP_RANGE") return "2:4";
    return std::nullopt;
  };
  const auto settings = nsel::ProfileSettings::from_environment(lookup);
  try {
    nsel::plan_worker(settings, {"a\"b", nsel::CaptureMode::nvtx, "", {}});
    FAIL() << "expected an error";
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "worker name='a\"b': the report name would hold '\"' or '&', which Nsight Systems "
              "cannot finish a report under; expected a name without '\"' and '&'");
  }
  try {
    nsel::plan_worker(settings, {"a&b", nsel::CaptureMode::nvtx, "", {}});
    FAIL() << "expected an error";
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 19), "worker name='a&b': ");
  }
  // Single quotes, spaces and shell syntax are fine: they are used literally.
  EXPECT_TRUE(
      nsel::plan_worker(settings, {"a'b $(c) `d`;", nsel::CaptureMode::nvtx, "", {}}).profile);
}

TEST(Plan, ReportNameUsesTheNormalisedWindow) {
  // Documented in docs/selection.md: NeMo RL writes the value as given (" 5:10 "); nsel names the
  // report for the window it read.
  for (const std::string range : {" 5:10 ",
                                  "\xc2\xa0"
                                  "5:1_0",
                                  "\xef\xbc\x95:10", "+5:10\t"}) {
    const auto settings = ProfileSettings::from_environment(
        env({{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", range}}));
    const auto plan =
        nsel::plan_worker(settings, {"dtensor_policy_worker", CaptureMode::cuda, "", {}});
    EXPECT_EQ(plan.options.get("o"), "dtensor_policy_worker_5:10_%p") << range;
  }
}
