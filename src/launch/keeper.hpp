// The keeper: the process run_profiled forks to run nsys, in a session of its own, so that a
// signal to the launcher's process group never reaches nsys or the program.
#pragma once

#include <string>
#include <vector>

#include "nsel/launch/supervisor.hpp"

namespace nsel {

// The keeper's whole life: runs `command` (nsys) with `environment` added, takes stop requests
// from the launcher on `control_fd` (a signal number per byte, end of file when the launcher is
// gone) and from its own signals, bounds every wait, then writes nsys's exit code as one byte to
// `status_fd` and exits with it.
[[noreturn]] void keeper_main(const std::vector<std::string>& command,
                              const std::vector<std::string>& environment,
                              const SupervisionOptions& options, int control_fd, int status_fd);

}  // namespace nsel
