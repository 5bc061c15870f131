// nsys's process tree, the one place that knows it: nsys starts nsys-launcher, which forks and
// executes the profiled program in a session of its own; nsys's agent and tee run from its
// installation too. nsel looks for the program from above nsys (the launcher, whose manifest
// names it) and from nsys itself (the keeper, which passes stop signals to its group).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace nsel {

// The folder nsys is installed in, with a trailing '/' ("<folder>/target-linux-x64/nsys", links
// resolved, gives "<folder>/"); "" when `nsys` cannot be resolved.
std::string nsys_install_folder(const std::string& nsys);

// The profiled program seen from above nsys: the shallowest, then oldest, descendant of `root`
// that is not part of nsys. Part of nsys is judged by the executable: in an "nsight-systems"
// folder or named nsys*, nsel itself (a child that has not executed anything yet), or unreadable
// (gone, or not ours to read).
std::optional<pid_t> find_profiled_program(pid_t root);

// The process groups, other than `leader`'s own, of the live processes descending from `leader`,
// leaving out processes whose executable lies under `skip_exe_folder`: for nsys (with
// nsys_install_folder skipped, so its agent is never counted while it detaches), the profiled
// program's group.
std::vector<int> descendant_process_groups(int leader, const std::string& skip_exe_folder = {});

// nsys's launcher (its child that starts the program and waits for it) has exited: only its
// name tells it from other short-lived children of nsys (the agent detaches through one).
bool launcher_exited(pid_t nsys);

}  // namespace nsel
