// Starting programs: finding them on PATH, replacing this process, running them as children and
// waiting for them, and running short helpers whose output is collected.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nsel {

// Resolves `program` as execvp would (a name with '/' is taken as a path; otherwise the first
// executable regular file on `path_variable`), returning an absolute path. Throws nsel::Error
// naming `source` when there is none.
std::string resolve_program(std::string_view program, std::string_view path_variable,
                            std::string_view source = "PROGRAM");

// The same lookup, for programs that may be absent: nullopt instead of an error.
std::optional<std::string> find_program(std::string_view program, std::string_view path_variable);

// True for a regular file this process may execute (the test resolve_program applies).
bool is_executable_file(const std::filesystem::path& path);

// Replaces this process with argv[0] (an absolute path) and `extra_environment` added
// (NAME=value). Returns only by throwing nsel::Error.
[[noreturn]] void replace_process(const std::vector<std::string>& argv,
                                  const std::vector<std::string>& extra_environment = {});

// Where a child's standard output and error go.
// to_log: standard output and error appended to the `log` file of spawn_process (created 0600).
enum class ChildOutput { inherit, to_stderr, discard, to_log };

// Starts argv[0] (an absolute path) as a child with `extra_environment` added, no signal blocked
// and the stop signals (TERM, INT, HUP, PIPE, CHLD) at their defaults. With
// `own_process_group` the child leads a new process group. Throws on failure.
pid_t spawn_process(const std::vector<std::string>& argv,
                    const std::vector<std::string>& extra_environment = {},
                    const std::string& working_directory = "",
                    ChildOutput output = ChildOutput::inherit, bool own_process_group = false,
                    const std::filesystem::path& log = {});

// Waits for `child`; its exit code, or 128 + signal number when a signal ended it.
int wait_exit_code(pid_t child);

// Runs argv (argv[0] absolute) to its end with its output discarded; its exit code as above.
int run_quietly(const std::vector<std::string>& argv);

// How a helper program run to its end with its output in a file fared.
struct LoggedRun {
  int exit_code = -1;   // as wait_exit_code gives it; -1 when it could not start
  std::string problem;  // the system's reason when it could not start
};

// Runs argv (argv[0] absolute) to its end in this process's group (so a Ctrl-C reaches it too),
// with stdin from /dev/null and standard output and error written to `log` (created or emptied,
// mode 0600). Never throws for the program's own failures; they are in the result.
LoggedRun run_logged(const std::vector<std::string>& argv, const std::filesystem::path& log);

// What a short-lived helper program printed (standard output and error together).
struct CapturedRun {
  int exit_code = -1;  // as wait_exit_code gives it; -1 when it could not start
  std::string output;
  bool timed_out = false;  // then it was killed with its process group
};

// Runs argv (argv[0] absolute) with stdin from /dev/null, collecting its output, for at most
// `timeout`. Never throws for the program's own failures; they are in the result.
CapturedRun run_capturing(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// What a function run in a forked child gave back.
struct ChildAnswer {
  std::string output;      // what it returned (as far as it came before a timeout)
  bool timed_out = false;  // then the child was killed
  std::string problem;     // "pipe: ..." or "fork: ..." when no child could be started
};

// Runs `work` in a forked child and collects the text it returns, for at most `timeout`: for
// work that may crash or hang (a driver) and must not take the caller, or its state, with it.
// Forks: call it only while single-threaded.
ChildAnswer run_in_child(const std::function<std::string()>& work,
                         std::chrono::milliseconds timeout);

// Stopping cleanly while helpers run: while a StopCleanup lives, SIGTERM, SIGINT or SIGHUP to
// this process ends every child started by run_quietly_stoppable (its whole process group: TERM,
// then KILL after 2 s), removes every file a RemovedOnStop names, and exits with 128 + the
// signal. Without it, a stopped `nsel report` would leave `nsys export` running, writing a
// temporary file nobody removes. Scopes nest; the outermost restores the previous handlers.
class StopCleanup {
 public:
  StopCleanup();
  ~StopCleanup();
  StopCleanup(const StopCleanup&) = delete;
  StopCleanup& operator=(const StopCleanup&) = delete;
};

// A file that a stop signal removes (see StopCleanup) while this lives: a temporary output.
class RemovedOnStop {
 public:
  explicit RemovedOnStop(const std::filesystem::path& file);
  ~RemovedOnStop();
  RemovedOnStop(const RemovedOnStop&) = delete;
  RemovedOnStop& operator=(const RemovedOnStop&) = delete;

 private:
  int slot_;
};

// run_quietly; while a StopCleanup lives, with the child leading its own process group, which a
// stop signal ends. Once a stop signal came, starts nothing and returns 128 + that signal. With
// a `log`, the child's standard output and error are appended to it (created 0600) instead of
// discarded.
int run_quietly_stoppable(const std::vector<std::string>& argv,
                          const std::filesystem::path& log = {});

// A signal's name: "SIGKILL" for 9, "signal 70" where the system has none.
std::string signal_name(int signal);

// The signal that ended a program whose exit status a shell reports as 128 + N, or nullopt.
std::optional<int> signal_of_exit_status(std::optional<int> exit_status);

// "killed by SIGKILL (exit status 137)", for a status signal_of_exit_status reads as a signal.
std::string killed_text(int exit_status);

// The value of an environment variable of this process, or nullopt when it is unset.
std::optional<std::string> environment_variable(std::string_view name);

// This executable's own path, from /proc/self/exe. Throws nsel::Error when it cannot be read.
std::string self_executable();

}  // namespace nsel
