// Reading other processes from /proc: their state, parent, group, executable and arguments.
// Every reader tolerates a process that ends while it is read.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
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

// The PID namespace of this process: the inode number /proc/self/ns/pid names; nullopt when
// /proc cannot tell.
std::optional<unsigned long long> own_pid_namespace();

// The inode of the host's own (initial) PID namespace, the same on every Linux since 3.8: a
// process in it sees every process of the machine.
inline constexpr unsigned long long kInitialPidNamespace = 0xEFFFFFFCULL;

// /proc/sys/kernel/random/boot_id: one per boot of the kernel, shared by all its containers.
std::optional<std::string> kernel_boot_id();

// Every process this one can see, by PID namespace: the ids each has in its own namespace (the
// last of /proc/<pid>/status's NSpid). `complete` is false when some process's namespace could
// not be read (another user's, without the right to look), so that a process missing from it
// may still run.
struct NamespaceProcesses {
  std::map<unsigned long long, std::set<long long>> pids;
  bool complete = true;
};
NamespaceProcesses read_namespace_processes();

}  // namespace nsel
