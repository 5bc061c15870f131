// Reading other processes from /proc: their state, parent, group, executable and arguments.
// Every reader tolerates a process that ends while it is read.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
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

}  // namespace nsel
