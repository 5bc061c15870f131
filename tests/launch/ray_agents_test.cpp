// Ray's runtime-env agents found on this node, with what their environment says about nsel's
// plugin. Real Ray agents are found by the Ray tests (python/tests/test_ray_plugin.py); here,
// stand-ins with an agent's command line and environment.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "nsel/core/error.hpp"
#include "nsel/launch/ray_agents.hpp"
#include "nsel/sys/process.hpp"

namespace {

namespace fs = std::filesystem;

// `sh -c 'sleep 30' <ray>/_private/runtime_env/agent/main.py --session-dir=<session>`, in a
// group of its own with its output discarded.
pid_t stand_in_agent(const fs::path& session, const std::vector<std::string>& environment) {
  return nsel::spawn_process(
      {"/bin/sh", "-c", "sleep 30", "/venv/ray/_private/runtime_env/agent/main.py", "--node-id=abc",
       "--session-dir=" + session.string()},
      environment, "", nsel::ChildOutput::discard, true);
}

// As Ray's agent looks once it has renamed itself: only its title on its command line, its log
// file open in <session>/logs/, and (with `under_raylet`) a parent named raylet holding the
// environment. bash's `exec -a` sets the names; the fixed scripts are ours.
pid_t renamed_agent(const fs::path& session, const std::vector<std::string>& environment,
                    bool under_raylet) {
  fs::create_directories(session / "logs");
  const std::string agent = R"((exec -a ray::RuntimeEnvAgent sleep 30 3>>"$0") & wait)";
  const std::string script =
      under_raylet
          ? "exec -a /venv/ray/core/src/ray/raylet/raylet /bin/bash -c '" + agent + "' \"$0\""
          : agent;
  return nsel::spawn_process(
      {"/bin/bash", "-c", script, (session / "logs" / "runtime_env_agent.out").string()},
      environment, "", nsel::ChildOutput::discard, true);
}

void end(pid_t agent) {
  kill(-agent, SIGKILL);
  nsel::wait_exit_code(agent);
}

fs::path unique_session(const char* name) {
  return fs::temp_directory_path() / ("nsel-agents-" + std::to_string(getpid()) + "-" + name) /
         "session_2026";
}

}  // namespace

TEST(RayAgents, TheSessionsAgentAndItsPluginSettingAreFound) {
  const fs::path with = unique_session("with");
  const fs::path without = unique_session("without");
  const pid_t loads =
      stand_in_agent(with, {"RAY_RUNTIME_ENV_PLUGINS=" + nsel::nsel_plugin_setting()});
  const pid_t bare = stand_in_agent(without, {});
  usleep(100 * 1000);

  const auto found = nsel::find_ray_runtime_env_agent(with);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->pid, loads);
  EXPECT_EQ(found->setting, nsel::PluginSetting::loads_nsel);
  EXPECT_EQ(nsel::check_plugin_loaded("w", with), nsel::PluginLoadedAnswer::loaded);

  const auto other = nsel::find_ray_runtime_env_agent(without);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->pid, bare);
  EXPECT_EQ(other->setting, nsel::PluginSetting::unset);
  try {
    nsel::check_plugin_loaded("dtensor_policy_worker", without);
    ADD_FAILURE() << "an agent without the plugin must stop the driver";
  } catch (const nsel::Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(std::string(e.what()),
              "worker 'dtensor_policy_worker' would run UNPROFILED: Ray does not load nsel's "
              "plugin (RAY_RUNTIME_ENV_PLUGINS is unset for Ray's runtime-env agent of '" +
                  without.string() + "' (pid " + std::to_string(bare) +
                  ")), so it ignores the actor's 'nsel' runtime_env field; set "
                  "RAY_RUNTIME_ENV_PLUGINS='[{\"class\": \"nsel.ray_plugin.NselPlugin\"}]' in the "
                  "environment of 'ray start' on every node (or of this driver before ray.init() "
                  "starts a local cluster), or use nsel.nsight_runtime_env()");
  }
  EXPECT_EQ(nsel::check_plugin_loaded("w", unique_session("none")),
            nsel::PluginLoadedAnswer::unknown)
      << "no agent of that session here: the cluster must be asked";
  end(loads);
  end(bare);
}

TEST(RayAgents, AnAgentThatRenamedItselfIsReadThroughItsRaylet) {
  const fs::path session = unique_session("renamed");
  const pid_t group =
      renamed_agent(session, {"RAY_RUNTIME_ENV_PLUGINS=" + nsel::nsel_plugin_setting()}, true);
  const fs::path orphan_session = unique_session("orphan");
  const pid_t orphan = renamed_agent(
      orphan_session, {"RAY_RUNTIME_ENV_PLUGINS=" + nsel::nsel_plugin_setting()}, false);
  usleep(300 * 1000);
  const auto found = nsel::find_ray_runtime_env_agent(session);
  ASSERT_TRUE(found.has_value());
  EXPECT_NE(found->pid, group) << "the agent is the raylet's child";
  EXPECT_TRUE(found->environment_readable);
  EXPECT_EQ(found->setting, nsel::PluginSetting::loads_nsel);
  EXPECT_EQ(nsel::check_plugin_loaded("w", session), nsel::PluginLoadedAnswer::loaded);
  // Without a raylet parent its environment is unknown (its own was overwritten by the rename).
  const auto alone = nsel::find_ray_runtime_env_agent(orphan_session);
  ASSERT_TRUE(alone.has_value());
  EXPECT_FALSE(alone->environment_readable);
  EXPECT_EQ(nsel::check_plugin_loaded("w", orphan_session), nsel::PluginLoadedAnswer::unknown);
  end(group);
  end(orphan);
  fs::remove_all(session.parent_path());
  fs::remove_all(orphan_session.parent_path());
}

TEST(RayAgents, BeforeRayInitTheDriversOwnSettingCounts) {
  const auto lookup = [](const char* value) {
    return [value](std::string_view name) -> std::optional<std::string> {
      if (name == "RAY_RUNTIME_ENV_PLUGINS" && value != nullptr) return std::string(value);
      return std::nullopt;
    };
  };
  EXPECT_NO_THROW(nsel::check_plugin_before_ray_init(
      "w", lookup("[{\"class\": \"nsel.ray_plugin.NselPlugin\"}]")));
  EXPECT_THROW(nsel::check_plugin_before_ray_init("w", lookup(nullptr)), nsel::Error);
  EXPECT_THROW(nsel::check_plugin_before_ray_init("w", lookup("[{\"class\": \"x.Y\"}]")),
               nsel::Error);
}
