// What nsel gives Ray for one worker: the entry of Ray's own `nsight` runtime-env field, and the
// interpreter command line of nsel's runtime-env plugin. Both reach a shell unquoted by Ray
// (`bash -c "exec <py_executable> ..."`), so every value nsel puts there is shell-quoted.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nsel/core/plan.hpp"
#include "nsel/core/rank_selection.hpp"
#include "nsel/core/settings.hpp"

namespace nsel {

// The variables that configure a worker's selection: forwarded by nsel's plugin so that the
// worker's node decides with the driver's settings.
inline constexpr std::string_view kForwardedVariables[] = {"NRL_NSYS_WORKER_PATTERNS",
                                                           "NRL_NSYS_PROFILE_STEP_RANGE",
                                                           "NRL_NSYS_EXTRA_OPTIONS",
                                                           "NSEL_CAPTURE",
                                                           kRanksVariable,
                                                           kLocalRanksVariable,
                                                           kNodesVariable};

// For `runtime_env={"nsight": {...}}`: the plan's nsys options (output name relative, so Ray puts
// it in <session>/logs/nsight/), each value shell-quoted, and the variables the worker's step
// controller needs (plan.environment) added to nsys's --env-var so that a worker started by Ray's
// plugin captures exactly as one started by `nsel exec`. Empty when the plan profiles nothing.
std::vector<std::pair<std::string, std::string>> ray_nsight_options(const WorkerPlan& plan);

// The py_executable nsel's plugin gives Ray:
//   env NAME=value... <nsel> exec --worker=<worker> --output-dir=<dir> [--rank=N]
//       [--local-rank=N] [--node=NAME] -- <py_executable>
// with nsel's own words quoted. The variables (the driver's selection) travel on the command line
// because Ray expands `$NAME` inside runtime_env variables, which would change an option value.
// `py_executable` is kept as it is: it is already shell text that Ray or an earlier plugin wrote
// (the worker's own interpreter, possibly with a prefix). The identity the driver gave (an actor's
// rank) becomes flags, so that `nsel exec` on the worker's node applies NSEL_PROFILE_RANKS with
// it and NSEL_PROFILE_NODES with that node's host name unless a node is given.
std::string ray_plugin_executable(std::string_view nsel_binary, std::string_view worker,
                                  std::string_view output_dir, std::string_view py_executable,
                                  const std::vector<std::string>& environment = {},
                                  const IdentityOverrides& identity = {});

// Ray's runtime-env agent loads third-party plugins from this variable of its own environment
// (the environment of `ray start`, or of the driver whose ray.init() starts a local cluster); a
// runtime_env field no loaded plugin claims is ignored with a warning in the agent's log.
inline constexpr std::string_view kRayPluginsVariable = "RAY_RUNTIME_ENV_PLUGINS";
inline constexpr std::string_view kNselPluginClass = "nsel.ray_plugin.NselPlugin";
// The value that loads nsel's plugin: [{"class": "nsel.ray_plugin.NselPlugin"}].
std::string nsel_plugin_setting();

// What a RAY_RUNTIME_ENV_PLUGINS value says about nsel's plugin.
enum class PluginSetting {
  loads_nsel,    // a list whose entries include {"class": "nsel.ray_plugin.NselPlugin", ...}
  unset,         // unset or empty: Ray loads no third-party plugin
  without_nsel,  // a valid list of other plugins
  malformed,     // not a JSON list of objects with a "class": Ray's agent fails to start
};
std::string_view to_string(PluginSetting setting);
PluginSetting read_plugin_setting(const std::optional<std::string>& value);

// Whether `import nsel` fixes Ray's nsight launcher on disk (the at-import fix, kept for NeMo RL
// parity where Ray's own `nsight` field is used), and why not when it does not.
struct AtImportFix {
  bool apply = false;
  std::string skipped_because;  // empty when applied
};
inline constexpr std::string_view kAtImportFixVariable = "NSEL_RAY_PATCH";
// Applied only in a process that is not Ray's own (a driver: Ray sets RAY_RAYLET_PID in every
// worker and agent it starts, and removes it for a submitted job's driver), with
// NRL_NSYS_WORKER_PATTERNS set, NSEL_RAY_PATCH not "0", and RAY_RUNTIME_ENV_PLUGINS not loading
// nsel's plugin (which keeps the interpreter itself and needs no fix). A bad NSEL_RAY_PATCH value
// throws nsel::Error (exit code 2).
AtImportFix decide_at_import_fix(const EnvLookup& environment);

// Whether this process was started by a Ray raylet (a worker or an agent): RAY_RAYLET_PID is set.
bool started_by_raylet(const EnvLookup& environment);

}  // namespace nsel
