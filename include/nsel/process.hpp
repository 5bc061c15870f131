// Starting programs: resolving them on PATH, replacing this process, or running them as
// supervised children whose exit status becomes ours.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace nsel {

// Resolves `program` as execvp would (a name with '/' is taken as a path; otherwise the first
// executable regular file on `path_variable`), returning an absolute path. Throws nsel::Error
// naming `source` when there is none.
std::string resolve_program(std::string_view program, std::string_view path_variable,
                            std::string_view source = "PROGRAM");

// Replaces this process with argv[0] (an absolute path) and `extra_environment` added
// (NAME=value). Returns only by throwing nsel::Error.
[[noreturn]] void replace_process(const std::vector<std::string>& argv,
                                  const std::vector<std::string>& extra_environment = {});

// Where a child's standard output and error go.
enum class ChildOutput { inherit, to_stderr, discard };

// Starts argv[0] (an absolute path) as a child with `extra_environment` added, no signal blocked
// and the stop signals (TERM, INT, HUP, PIPE, CHLD) at their defaults. With
// `own_process_group` the child leads a new process group. Throws on failure.
pid_t spawn_process(const std::vector<std::string>& argv,
                    const std::vector<std::string>& extra_environment = {},
                    const std::string& working_directory = "",
                    ChildOutput output = ChildOutput::inherit, bool own_process_group = false);

// What a short-lived helper program printed (standard output and error together).
struct CapturedRun {
  int exit_code = -1;  // as wait_exit_code gives it; -1 when it could not start
  std::string output;
  bool timed_out = false;  // then it was killed with its process group
};

// Runs argv (argv[0] absolute) with stdin from /dev/null, collecting its output, for at most
// `timeout`. Never throws for the program's own failures; they are in the result.
CapturedRun run_capturing(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// Waits for `child`; its exit code, or 128 + signal number when a signal ended it.
int wait_exit_code(pid_t child);

// Runs argv as a child, passing on SIGTERM, SIGHUP and a SIGINT sent to nsel alone (a terminal's
// Ctrl-C already reaches the whole foreground group), and returns its exit code as above.
// `terminate_as` replaces SIGTERM when passed on (nsys keeps its report on SIGINT).
// `child_pid`, when given, receives the child's process id.
int run_supervised(const std::vector<std::string>& argv,
                   const std::vector<std::string>& extra_environment = {}, int terminate_as = 15,
                   pid_t* child_pid = nullptr);

// Ends the `nsys --start-agent` daemons that the nsys front end `nsys_pid` started (their
// session is named profile-<program>-<nsys_pid>): they can outlive nsys and spin a core for
// minutes. SIGTERM, then SIGKILL after `grace_ms`. Returns how many were found.
int stop_nsys_agents(pid_t nsys_pid, int grace_ms = 1000);

// The whole text of a /proc file, or "" when it cannot be read. Never throws: a process can end
// while it is read (the kernel then answers ESRCH, which iostreams turn into an exception).
std::string read_proc_file(const std::string& path) noexcept;

}  // namespace nsel
