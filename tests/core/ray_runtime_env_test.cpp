#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/ray_runtime_env.hpp"
#include "nsel/core/settings.hpp"

namespace {

// What a real POSIX shell makes of `line` (as Ray's `bash -c "exec <py_executable> ..."` does):
// each word on its own line.
std::string words_after_shell(const std::string& line) {
  const std::string command =
      "sh -c 'for w in \"$@\"; do printf \"<%s>\\n\" \"$w\"; done' _ " + line;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  char buffer[512];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe.get()) != nullptr) out += buffer;
  return out;
}

nsel::WorkerPlan plan_for(const std::string& worker, const char* extra_options = nullptr) {
  const auto settings = nsel::ProfileSettings::from_environment(
      [&](std::string_view name) -> std::optional<std::string> {
        if (name == "NRL_NSYS_WORKER_PATTERNS") return "*";
        if (name == "NRL_NSYS_PROFILE_STEP_RANGE") return "2:4";
        if (name == "NRL_NSYS_EXTRA_OPTIONS" && extra_options) return extra_options;
        return std::nullopt;
      });
  return nsel::plan_worker(settings, {worker, nsel::CaptureMode::nvtx, "", {}});
}

}  // namespace

TEST(RayNsightOptions, ContractOptionsQuotedWithTheStepVariables) {
  const auto options = nsel::ray_nsight_options(plan_for("w $(x)"));
  ASSERT_FALSE(options.empty());
  EXPECT_EQ(options.front(), (std::pair<std::string, std::string>{"t", "cuda,nvtx"}));
  std::map<std::string, std::string> by_key(options.begin(), options.end());
  EXPECT_EQ(by_key["o"], "'w $(x)_2:4_%p'");
  EXPECT_EQ(by_key["capture-range"], "nvtx");
  EXPECT_EQ(by_key["env-var"],
            "NSYS_NVTX_PROFILER_REGISTER_ONLY=0,NSEL_STEP_CAPTURE=nvtx,"
            "NRL_NSYS_PROFILE_STEP_RANGE=2:4");
  // Ray renders "-o VALUE"; the shell gives nsys the name back unchanged.
  EXPECT_EQ(words_after_shell("-o " + by_key["o"]), "<-o>\n<w $(x)_2:4_%p>\n");
}

TEST(RayNsightOptions, NothingForAnUnselectedWorker) {
  nsel::WorkerPlan unselected;
  EXPECT_TRUE(nsel::ray_nsight_options(unselected).empty());
}

TEST(RayPluginExecutable, EveryWordSurvivesTheShell) {
  const std::string line = nsel::ray_plugin_executable(
      "/opt/nsel bin/nsel", "-evil $(touch x) `y`; 'q'", "/tmp/ray/s/logs/nsight",
      "/venv/bin/python", {"NRL_NSYS_EXTRA_OPTIONS={\"o\": \"$HOME; `z`\"}"});
  EXPECT_EQ(words_after_shell(line),
            "<env>\n<NRL_NSYS_EXTRA_OPTIONS={\"o\": \"$HOME; `z`\"}>\n</opt/nsel bin/nsel>\n"
            "<exec>\n<--worker=-evil $(touch x) `y`; 'q'>\n<--output-dir=/tmp/ray/s/logs/nsight>\n"
            "<-->\n</venv/bin/python>\n");
  EXPECT_EQ(nsel::ray_plugin_executable("nsel", "w", "/d", "python -X dev"),
            "nsel exec --worker=w --output-dir=/d -- python -X dev");
}

TEST(RayPluginExecutable, TheActorsIdentityBecomesFlagsOfExec) {
  nsel::IdentityOverrides identity;
  identity.rank = 3;
  identity.local_rank = 1;
  EXPECT_EQ(nsel::ray_plugin_executable("nsel", "w", "/d", "python", {}, identity),
            "nsel exec --worker=w --output-dir=/d --rank=3 --local-rank=1 -- python");
  identity = {};
  identity.node = "node 7; $(x)";
  EXPECT_EQ(
      words_after_shell(nsel::ray_plugin_executable("nsel", "w", "/d", "python", {}, identity)),
      "<nsel>\n<exec>\n<--worker=w>\n<--output-dir=/d>\n<--node=node 7; $(x)>\n<-->\n"
      "<python>\n");
}

TEST(RayPluginExecutable, TheRankSelectionTravelsToTheWorkersNode) {
  std::vector<std::string_view> names(std::begin(nsel::kForwardedVariables),
                                      std::end(nsel::kForwardedVariables));
  for (std::string_view name : {"NSEL_PROFILE_RANKS", "NSEL_PROFILE_LOCAL_RANKS",
                                "NSEL_PROFILE_NODES", "NRL_NSYS_WORKER_PATTERNS"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(RayPluginSetting, ReadAsRaysAgentReadsIt) {
  using nsel::PluginSetting;
  EXPECT_EQ(nsel::read_plugin_setting(std::nullopt), PluginSetting::unset);
  EXPECT_EQ(nsel::read_plugin_setting(" "), PluginSetting::unset);
  EXPECT_EQ(nsel::read_plugin_setting(nsel::nsel_plugin_setting()), PluginSetting::loads_nsel);
  EXPECT_EQ(nsel::nsel_plugin_setting(), "[{\"class\": \"nsel.ray_plugin.NselPlugin\"}]");
  EXPECT_EQ(nsel::read_plugin_setting(
                "[{\"class\": \"other.Plugin\"}, {\"class\": \"nsel.ray_plugin.NselPlugin\", "
                "\"priority\": 95}]"),
            PluginSetting::loads_nsel);
  EXPECT_EQ(nsel::read_plugin_setting("[{\"class\": \"other.Plugin\"}]"),
            PluginSetting::without_nsel);
  EXPECT_EQ(nsel::read_plugin_setting("[]"), PluginSetting::without_nsel);
  for (const char* bad :
       {"nsel.ray_plugin.NselPlugin", "{\"class\": \"nsel.ray_plugin.NselPlugin\"}",
        "[\"nsel.ray_plugin.NselPlugin\"]", "[{\"klass\": \"x\"}]", "[{\"class\": 3}]", "[{"}) {
    EXPECT_EQ(nsel::read_plugin_setting(std::string(bad)), PluginSetting::malformed) << bad;
  }
}

TEST(AtImportFix, OnlyInADriverThatMayUseRaysOwnField) {
  std::map<std::string, std::string> env = {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}};
  const auto decide = [&env] {
    return nsel::decide_at_import_fix([&env](std::string_view name) -> std::optional<std::string> {
      const auto found = env.find(std::string(name));
      if (found == env.end()) return std::nullopt;
      return found->second;
    });
  };
  EXPECT_TRUE(decide().apply);
  env["NSEL_RAY_PATCH"] = "1";
  EXPECT_TRUE(decide().apply);
  env["NSEL_RAY_PATCH"] = "0";
  EXPECT_FALSE(decide().apply);
  EXPECT_EQ(decide().skipped_because, "NSEL_RAY_PATCH=0");
  env.erase("NSEL_RAY_PATCH");
  env["RAY_RUNTIME_ENV_PLUGINS"] = nsel::nsel_plugin_setting();
  EXPECT_FALSE(decide().apply);
  EXPECT_NE(decide().skipped_because.find("loads nsel's plugin"), std::string::npos);
  env["RAY_RUNTIME_ENV_PLUGINS"] = "[{\"class\": \"other.Plugin\"}]";
  EXPECT_TRUE(decide().apply);
  env["RAY_RAYLET_PID"] = "4242";
  EXPECT_FALSE(decide().apply) << "a worker or agent Ray started never patches Ray";
  EXPECT_NE(decide().skipped_because.find("RAY_RAYLET_PID"), std::string::npos);
  env.erase("RAY_RAYLET_PID");
  env["NRL_NSYS_WORKER_PATTERNS"] = "";
  EXPECT_FALSE(decide().apply);
  env["NSEL_RAY_PATCH"] = "maybe";
  try {
    decide();
    ADD_FAILURE() << "a bad NSEL_RAY_PATCH is an error";
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "NSEL_RAY_PATCH='maybe': not a yes/no value; expected '1' (yes) or '0' (no)");
    EXPECT_EQ(e.exit_code(), 2);
  }
}
