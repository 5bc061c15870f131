// What nsel gives Ray for one worker: the entry of Ray's own `nsight` runtime-env field, and the
// interpreter command line of nsel's runtime-env plugin. Both reach a shell unquoted by Ray
// (`bash -c "exec <py_executable> ..."`), so every value nsel puts there is shell-quoted.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nsel/core/plan.hpp"
#include "nsel/core/rank_selection.hpp"

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

}  // namespace nsel
