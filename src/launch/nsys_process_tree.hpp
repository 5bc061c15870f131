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

// What a process is to nsel, by one rule for both questions below: part of nsys when its
// executable lies under `install_folder` (nsys_install_folder; may be empty) or in an
// "nsight-systems" folder, is named nsys*, or is nsel itself (a child that has not executed
// anything yet); unknown when the executable cannot be read (gone, or not ours to read).
enum class NsysPart { nsys, program, unknown };
NsysPart classify_process(pid_t pid, const std::string& install_folder);

// The profiled program seen from above nsys: the shallowest, then oldest, descendant of `root`
// that classify_process calls the program.
std::optional<pid_t> find_profiled_program(pid_t root, const std::string& install_folder);

// The process groups, other than `leader`'s own, of the live processes descending from `leader`
// that are not part of nsys (unknown ones count): for nsys, the profiled program's group (nsys's
// agent is never counted while it detaches).
std::vector<int> descendant_process_groups(int leader, const std::string& install_folder);

// nsys's launcher (its child that starts the program and waits for it) has exited: only its
// name tells it from other short-lived children of nsys (the agent detaches through one).
bool launcher_exited(pid_t nsys);

}  // namespace nsel
