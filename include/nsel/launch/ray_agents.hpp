// Ray's runtime-env agents on this node and whether they load nsel's plugin. An agent loads
// third-party runtime-env plugins once, from RAY_RUNTIME_ENV_PLUGINS in the environment it
// started with, and ignores a runtime_env field that no loaded plugin claims (a warning in its
// own log): so a driver can tell, before any actor starts, whether an `nsel` field will profile.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nsel/core/ray_runtime_env.hpp"

namespace nsel {

struct RayRuntimeEnvAgent {
  pid_t pid = 0;
  std::filesystem::path session_dir;  // its --session-dir
  // false: another user's agent, or one that renamed itself (Ray's agents do) without a raylet
  // parent, whose environment then cannot be known
  bool environment_readable = false;
  std::optional<std::string> plugins;  // its RAY_RUNTIME_ENV_PLUGINS, when readable and set
  PluginSetting setting = PluginSetting::unset;
};

// Every runtime-env agent (ray/_private/runtime_env/agent/main.py) running on this node, in pid
// order.
std::vector<RayRuntimeEnvAgent> find_ray_runtime_env_agents();

// The agent of the session at `session_dir` (compared after resolving links), when one runs here.
std::optional<RayRuntimeEnvAgent> find_ray_runtime_env_agent(
    const std::filesystem::path& session_dir);

// Where a driver asked about nsel's plugin, for the message that says it is not loaded.
enum class PluginLoadedAnswer {
  loaded,   // Ray will honour the `nsel` field
  unknown,  // no agent of the session can be read here: ask the cluster (a probe task)
};

// For a driver that gives `worker` an `nsel` runtime_env field while connected to the Ray
// session at `session_dir`: `loaded` when this node's agent of that session loads nsel's plugin,
// `unknown` when no agent of it can be read here; otherwise throws nsel::Error (exit code 2)
// naming RAY_RUNTIME_ENV_PLUGINS, the agent and the value to set.
PluginLoadedAnswer check_plugin_loaded(std::string_view worker,
                                       const std::filesystem::path& session_dir);

// The same before ray.init(), from this process's own RAY_RUNTIME_ENV_PLUGINS, which the local
// cluster that ray.init() starts inherits: throws unless it loads nsel's plugin.
void check_plugin_before_ray_init(std::string_view worker, const EnvLookup& environment);

// The one line for a cluster that does not load nsel's plugin, `where` saying how nsel knows
// ("the cluster's own check: a task with an 'nsel' field ran without the plugin").
std::string plugin_not_loaded_message(std::string_view worker, std::string_view where);

}  // namespace nsel
