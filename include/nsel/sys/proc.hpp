// Reading other processes from /proc: their state, parent, group, executable and arguments.
// Every reader tolerates a process that ends while it is read.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nsel {

// The fields of /proc/<pid>/stat that nsel uses.
struct ProcessStat {
  pid_t pid = 0;
  pid_t parent = 0;
  pid_t group = 0;
  char state = '?';                    // 'Z' for a zombie
  std::string name;                    // the command name (may hold spaces and ')')
  unsigned long long start_ticks = 0;  // start time after boot, in clock ticks
};

// /proc/<pid>/stat of one process; nullopt when it is gone or unreadable.
std::optional<ProcessStat> read_process_stat(pid_t pid);

// Every process's stat, in pid order.
std::vector<ProcessStat> read_process_table();

// True when `pid` has exited and waits to be reaped.
bool is_zombie(pid_t pid);

// The children of `pid`: from /proc/<pid>/task/*/children where the kernel offers it, else from
// the parents in the whole process table.
std::vector<pid_t> child_processes(pid_t pid);

// /proc/<pid>/exe; empty when it cannot be read (gone, or not ours).
std::filesystem::path process_executable(pid_t pid);

// /proc/<pid>/cmdline split at its NUL bytes.
std::vector<std::string> process_arguments(pid_t pid);

// Where /proc/<pid>/fd/* point (files and other objects, as the kernel names them); empty when
// they cannot be read (gone, or another user's).
std::vector<std::filesystem::path> process_open_files(pid_t pid);

// The variable `name` of /proc/<pid>/environ (the environment the process started with);
// nullopt when it is unset there, or the file cannot be read (gone, or another user's).
std::optional<std::string> process_environment_variable(pid_t pid, std::string_view name);
// Whether this process may read /proc/<pid>/environ at all.
bool process_environment_readable(pid_t pid);

}  // namespace nsel
