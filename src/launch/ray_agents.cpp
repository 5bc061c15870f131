#include "nsel/launch/ray_agents.hpp"

#include <string_view>
#include <system_error>

#include "nsel/core/error.hpp"
#include "nsel/sys/proc.hpp"

namespace nsel {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kAgentScript = "/_private/runtime_env/agent/main.py";
constexpr std::string_view kSessionFlag = "--session-dir=";
// Once started, the agent renames itself (setproctitle): its command line is then only this.
constexpr std::string_view kAgentTitle = "ray::RuntimeEnvAgent";
// ... and its session is where its own log files are: <session>/logs/runtime_env_agent.*.
constexpr std::string_view kAgentLogPrefix = "runtime_env_agent";

fs::path session_of_renamed_agent(pid_t pid) {
  for (const fs::path& file : process_open_files(pid)) {
    if (file.parent_path().filename() == "logs" &&
        file.filename().string().starts_with(kAgentLogPrefix)) {
      return file.parent_path().parent_path();
    }
  }
  return {};
}

fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(path, ec);
  return ec ? path.lexically_normal() : real;
}

}  // namespace

std::vector<RayRuntimeEnvAgent> find_ray_runtime_env_agents() {
  std::vector<RayRuntimeEnvAgent> agents;
  for (const ProcessStat& process : read_process_table()) {
    if (process.state == 'Z') continue;
    const std::vector<std::string> arguments = process_arguments(process.pid);
    bool agent = false;
    RayRuntimeEnvAgent found;
    for (const std::string& argument : arguments) {
      if (argument.ends_with(kAgentScript)) agent = true;
      if (argument.starts_with(kSessionFlag))
        found.session_dir = argument.substr(kSessionFlag.size());
    }
    // Where the agent's starting environment can be read: renaming itself overwrote its own
    // /proc environ, but it inherits the environment of the raylet that started it.
    pid_t environment_of = process.pid;
    if (!agent && !arguments.empty() && arguments.front() == kAgentTitle) {
      agent = true;
      found.session_dir = session_of_renamed_agent(process.pid);
      const std::vector<std::string> parent = process_arguments(process.parent);
      environment_of =
          !parent.empty() && fs::path(parent.front()).filename() == "raylet" ? process.parent : 0;
    }
    if (!agent) continue;
    found.pid = process.pid;
    found.environment_readable = environment_of > 0 && process_environment_readable(environment_of);
    if (found.environment_readable) {
      found.plugins = process_environment_variable(environment_of, kRayPluginsVariable);
    }
    found.setting = read_plugin_setting(found.plugins);
    agents.push_back(std::move(found));
  }
  return agents;
}

std::optional<RayRuntimeEnvAgent> find_ray_runtime_env_agent(const fs::path& session_dir) {
  const fs::path wanted = resolved(session_dir);
  for (RayRuntimeEnvAgent& agent : find_ray_runtime_env_agents()) {
    if (!agent.session_dir.empty() && resolved(agent.session_dir) == wanted) return agent;
  }
  return std::nullopt;
}

std::string plugin_not_loaded_message(std::string_view worker, std::string_view where) {
  return "worker " + quote(worker) + " would run UNPROFILED: Ray does not load nsel's plugin (" +
         std::string(where) + "), so it ignores the actor's 'nsel' runtime_env field; set " +
         std::string(kRayPluginsVariable) + "=" + quote(nsel_plugin_setting()) +
         " in the environment of 'ray start' on every node (or of this driver before ray.init() "
         "starts a local cluster), or use nsel.nsight_runtime_env()";
}

PluginLoadedAnswer check_plugin_loaded(std::string_view worker, const fs::path& session_dir) {
  const std::optional<RayRuntimeEnvAgent> agent = find_ray_runtime_env_agent(session_dir);
  if (!agent || !agent->environment_readable) return PluginLoadedAnswer::unknown;
  if (agent->setting == PluginSetting::loads_nsel) return PluginLoadedAnswer::loaded;
  const std::string value = agent->plugins ? " is " + quote(*agent->plugins) : " is unset";
  throw Error(
      plugin_not_loaded_message(
          worker, std::string(kRayPluginsVariable) + value + " for Ray's runtime-env agent of " +
                      quote(session_dir.string()) + " (pid " + std::to_string(agent->pid) + ")"),
      2);
}

void check_plugin_before_ray_init(std::string_view worker, const EnvLookup& environment) {
  const std::optional<std::string> value = environment(kRayPluginsVariable);
  if (read_plugin_setting(value) == PluginSetting::loads_nsel) return;
  throw Error(plugin_not_loaded_message(
                  worker, std::string(kRayPluginsVariable) +
                              (value ? " is " + quote(*value) : std::string(" is unset")) +
                              " here and Ray is not initialized yet, so the cluster cannot be "
                              "asked; call it after ray.init()"),
              2);
}

}  // namespace nsel
