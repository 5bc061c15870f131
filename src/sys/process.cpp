#include "nsel/sys/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "nsel/core/error.hpp"

extern char** environ;

namespace nsel {
namespace {

std::string current_directory() {
  std::string buffer(4096, '\0');
  while (getcwd(buffer.data(), buffer.size()) == nullptr) {
    if (errno != ERANGE)
      throw Error(std::string("cannot read the working directory: ") + std::strerror(errno), 1);
    buffer.resize(buffer.size() * 2);
  }
  buffer.resize(std::strlen(buffer.c_str()));
  return buffer;
}

// The current environment with `extra` (NAME=value) set over it, as a stable vector.
std::vector<std::string> merged_environment(const std::vector<std::string>& extra) {
  std::map<std::string, std::string> by_name;
  std::vector<std::string> order;
  const auto put = [&](const std::string& entry) {
    const std::string name = entry.substr(0, entry.find('='));
    if (by_name.find(name) == by_name.end()) order.push_back(name);
    by_name[name] = entry;
  };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) put(*e);
  for (const std::string& entry : extra) put(entry);
  std::vector<std::string> out;
  out.reserve(order.size());
  for (const std::string& name : order) out.push_back(by_name[name]);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts argv[0] with `actions` applied and `extra_environment` added; 0 or the error number.
// The child starts with no blocked signals and default stop signals, whatever the caller has
// blocked or ignored for itself (an ignored signal would survive the exec).
int start_child(pid_t& child, const std::vector<std::string>& argv,
                const std::vector<std::string>& extra_environment,
                const posix_spawn_file_actions_t& actions, bool own_process_group) {
  std::vector<std::string> arguments = argv;
  std::vector<std::string> environment = merged_environment(extra_environment);
  auto argument_pointers = pointers(arguments);
  auto environment_pointers = pointers(environment);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attributes, &empty);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD}) {
    sigaddset(&defaults, signal_number);
  }
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (own_process_group) {
    posix_spawnattr_setpgroup(&attributes, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attributes, flags);
  const int rc = posix_spawn(&child, arguments.front().c_str(), &actions, &attributes,
                             argument_pointers.data(), environment_pointers.data());
  posix_spawnattr_destroy(&attributes);
  return rc;
}

// Reads `fd` to its end into `output` (its first MiB kept) until `deadline`; false when the
// deadline came first.
bool read_until(int fd, std::chrono::steady_clock::time_point deadline, std::string& output) {
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd descriptor{fd, POLLIN, 0};
    if (poll(&descriptor, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    if (output.size() < (1u << 20)) output.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

bool is_executable_file(const std::filesystem::path& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string resolve_program(std::string_view program, std::string_view path_variable,
                            std::string_view source) {
  const std::string name(program);
  if (name.empty()) {
    throw Error(std::string(source) + "='': empty program name; expected a program name or path");
  }
  if (name.find('/') != std::string::npos) {
    std::string path = name.front() == '/' ? name : current_directory() + "/" + name;
    if (!is_executable_file(path)) {
      throw Error(std::string(source) + "=" + quote(name) +
                  ": not an executable file; expected a path to a program");
    }
    return path;
  }
  size_t begin = 0;
  const std::string path_list(path_variable);
  while (begin <= path_list.size()) {
    size_t colon = path_list.find(':', begin);
    if (colon == std::string::npos) colon = path_list.size();
    std::string dir = path_list.substr(begin, colon - begin);
    if (dir.empty()) dir = ".";  // an empty PATH entry means the working directory
    std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) {
      if (candidate.front() != '/') candidate = current_directory() + "/" + candidate;
      return candidate;
    }
    begin = colon + 1;
  }
  throw Error(std::string(source) + "=" + quote(name) +
              ": not found on PATH; expected a program on PATH or a path to one");
}

void replace_process(const std::vector<std::string>& argv,
                     const std::vector<std::string>& extra_environment) {
  std::vector<std::string> arguments = argv;
  std::vector<std::string> environment = merged_environment(extra_environment);
  auto argument_pointers = pointers(arguments);
  auto environment_pointers = pointers(environment);
  execve(arguments.front().c_str(), argument_pointers.data(), environment_pointers.data());
  throw Error("cannot run " + quote(argv.front()) + ": " + std::strerror(errno), 126);
}

pid_t spawn_process(const std::vector<std::string>& argv,
                    const std::vector<std::string>& extra_environment,
                    const std::string& working_directory, ChildOutput output,
                    bool own_process_group, const std::filesystem::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!working_directory.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, working_directory.c_str());
  }
  if (output == ChildOutput::discard) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  } else if (output == ChildOutput::to_stderr) {
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  } else if (output == ChildOutput::to_log) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  pid_t child = 0;
  const int rc = start_child(child, argv, extra_environment, actions, own_process_group);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error("cannot run " + quote(argv.front()) + ": " + std::strerror(rc), 126);
  return child;
}

int wait_exit_code(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw Error(std::string("waitpid: ") + std::strerror(errno), 1);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

LoggedRun run_logged(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  LoggedRun result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t child = 0;
  const int rc = start_child(child, argv, {}, actions, false);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.problem = std::strerror(rc);
    return result;
  }
  result.exit_code = wait_exit_code(child);
  return result;
}

CapturedRun run_capturing(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CapturedRun result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  pid_t child = 0;
  // A group of its own, so that a timeout can end what it started too.
  const int rc = start_child(child, argv, {}, actions, true);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    result.output = std::strerror(rc);
    return result;
  }
  result.timed_out = !read_until(fds[0], std::chrono::steady_clock::now() + timeout, result.output);
  if (result.timed_out) kill(-child, SIGKILL);
  close(fds[0]);
  result.exit_code = wait_exit_code(child);
  return result;
}

ChildAnswer run_in_child(const std::function<std::string()>& work,
                         std::chrono::milliseconds timeout) {
  ChildAnswer answer;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    answer.problem = std::string("pipe: ") + std::strerror(errno);
    return answer;
  }
  const pid_t child = fork();
  if (child < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    answer.problem = std::string("fork: ") + std::strerror(error);
    return answer;
  }
  if (child == 0) {
    close(fds[0]);
    std::string text;
    try {
      text = work();
    } catch (...) {
      // An empty answer says that the work did not finish.
    }
    size_t written = 0;
    while (written < text.size()) {
      const ssize_t n = write(fds[1], text.data() + written, text.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  answer.timed_out = !read_until(fds[0], std::chrono::steady_clock::now() + timeout, answer.output);
  close(fds[0]);
  if (answer.timed_out) kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return answer;
}

std::optional<std::string> find_program(std::string_view program, std::string_view path_variable) {
  try {
    return resolve_program(program, path_variable, "PROGRAM");
  } catch (const Error&) {
    return std::nullopt;
  }
}

int run_quietly(const std::vector<std::string>& argv) {
  return wait_exit_code(spawn_process(argv, {}, "", ChildOutput::discard));
}

// ---- stop cleanup: state the signal handler reads, so plain atomics and fixed arrays ----------

namespace {

constexpr int kStopSlots = 256;
constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};

// A slot is free (0), being filled (1) or holds a child's group or a file to remove (2).
struct StopSlot {
  std::atomic<int> state{0};
  std::atomic<pid_t> group{0};
  char file[4096] = {};
};
StopSlot stop_slots[kStopSlots];
std::atomic<int> stop_signal{0};  // the signal that is stopping this process, once one came
// Children being started whose group is not in a slot yet: the handler waits for them, so that a
// stop never ends this process while a child it cannot see yet goes on writing.
std::atomic<int> children_starting{0};
std::mutex stop_scopes_mutex;
int stop_scopes = 0;
struct sigaction previous_actions[3];

int claim_stop_slot() {
  for (int i = 0; i < kStopSlots; ++i) {
    int expected = 0;
    if (stop_slots[i].state.compare_exchange_strong(expected, 1)) return i;
  }
  return -1;  // more at once than any run starts: that one is merely not cleaned up
}

void release_stop_slot(int slot) {
  if (slot < 0) return;
  stop_slots[slot].state.store(1);
  stop_slots[slot].group.store(0);
  stop_slots[slot].file[0] = '\0';
  stop_slots[slot].state.store(0);
}

void sleep_briefly() {
  const timespec pause{0, 20'000'000};  // 20 ms
  nanosleep(&pause, nullptr);
}

// Only async-signal-safe calls from here on.
bool groups_alive() {
  bool alive = false;
  for (StopSlot& slot : stop_slots) {
    const pid_t group = slot.state.load() == 2 ? slot.group.load() : 0;
    if (group <= 0) continue;
    waitpid(group, nullptr, WNOHANG);  // a leader that ended is reaped, else it would count
    if (kill(-group, 0) == 0) alive = true;
  }
  return alive;
}

void signal_groups(int signal_number) {
  for (StopSlot& slot : stop_slots) {
    const pid_t group = slot.state.load() == 2 ? slot.group.load() : 0;
    if (group > 0) kill(-group, signal_number);
  }
}

void on_stop_signal(int signal_number) {
  int none = 0;
  if (!stop_signal.compare_exchange_strong(none, signal_number)) {
    for (;;) pause();  // another thread is already cleaning up, and will exit
  }
  // A thread starting a child blocks stop signals until its group is in a slot, and starts none
  // once stop_signal is set: waiting here means every child started is seen (5 s at most).
  for (int i = 0; i < 250 && children_starting.load() > 0; ++i) sleep_briefly();
  signal_groups(SIGTERM);
  for (int i = 0; i < 100 && groups_alive(); ++i) sleep_briefly();  // 2 s to end
  if (groups_alive()) {
    signal_groups(SIGKILL);
    for (int i = 0; i < 50 && groups_alive(); ++i) sleep_briefly();
  }
  for (StopSlot& slot : stop_slots) {
    if (slot.state.load() == 2 && slot.file[0] != '\0') unlink(slot.file);
  }
  _exit(128 + signal_number);
}

// A stop signal's handler, on another thread, ends the children, removes the files of every
// slot and exits. The child ending (or its reaping by the handler, which makes the wait throw) is
// no reason for this thread to go on: releasing its slots, or anything its caller does next
// (keeping a failed export's log), would race with that cleanup and leave files behind.
void wait_for_the_stop() {
  if (stop_signal.load() == 0) return;
  for (;;) pause();
}

// While one lives, the stop signals wait on this thread and the handler on any other waits for
// it: a child started then has its group in a slot before any stop can look.
class StartingChild {
 public:
  StartingChild() {
    sigset_t stops;
    sigemptyset(&stops);
    for (int signal_number : kStopSignals) sigaddset(&stops, signal_number);
    pthread_sigmask(SIG_BLOCK, &stops, &previous_mask_);
    ++children_starting;
  }
  ~StartingChild() {
    --children_starting;
    pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);  // a stop held back comes here
  }
  StartingChild(const StartingChild&) = delete;
  StartingChild& operator=(const StartingChild&) = delete;

 private:
  sigset_t previous_mask_{};
};
}  // namespace

StopCleanup::StopCleanup() {
  const std::lock_guard<std::mutex> lock(stop_scopes_mutex);
  if (stop_scopes++ > 0) return;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (int signal_number : kStopSignals) sigaddset(&action.sa_mask, signal_number);
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    sigaction(kStopSignals[i], &action, &previous_actions[i]);
  }
}

StopCleanup::~StopCleanup() {
  const std::lock_guard<std::mutex> lock(stop_scopes_mutex);
  if (--stop_scopes > 0) return;
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    sigaction(kStopSignals[i], &previous_actions[i], nullptr);
  }
}

RemovedOnStop::RemovedOnStop(const std::filesystem::path& file) : slot_(claim_stop_slot()) {
  if (slot_ < 0) return;
  const std::string& name = file.native();
  if (name.size() >= sizeof stop_slots[slot_].file) {
    release_stop_slot(slot_);
    slot_ = -1;
    return;
  }
  std::memcpy(stop_slots[slot_].file, name.c_str(), name.size() + 1);
  stop_slots[slot_].state.store(2);
}

RemovedOnStop::~RemovedOnStop() {
  release_stop_slot(slot_);
}

int run_quietly_stoppable(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  if (const int stopping = stop_signal.load()) return 128 + stopping;
  const ChildOutput output = log.empty() ? ChildOutput::discard : ChildOutput::to_log;
  {
    // Outside a StopCleanup the child stays in this group, so that a Ctrl-C reaches it.
    const std::lock_guard<std::mutex> lock(stop_scopes_mutex);
    if (stop_scopes == 0) return wait_exit_code(spawn_process(argv, {}, "", output, false, log));
  }
  // Between the child's start and its group's slot, a stop on this thread would end nsel and
  // leave the child running and writing (glibc's posix_spawn holds signals back while the child
  // opens its log, and delivers them the moment it returns): the stop signals wait until the slot
  // is filled (StartingChild).
  pid_t child = 0;
  int slot = -1;
  {
    const StartingChild starting;
    if (stop_signal.load() == 0) {
      slot = claim_stop_slot();
      try {
        child = spawn_process(argv, {}, "", output, true, log);
      } catch (...) {
        release_stop_slot(slot);
        throw;
      }
      if (slot >= 0) {
        stop_slots[slot].group.store(child);  // the child leads its group: its pid is the group's
        stop_slots[slot].state.store(2);
      }
    }
  }
  if (child == 0) wait_for_the_stop();  // a stop had begun: nothing started, and it ends us
  int code = 0;
  try {
    code = wait_exit_code(child);
  } catch (...) {
    wait_for_the_stop();
    release_stop_slot(slot);
    throw;
  }
  wait_for_the_stop();
  release_stop_slot(slot);
  return code;
}

std::optional<std::string> environment_variable(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string self_executable() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find nsel's own executable: " + ec.message(), 1);
  return path.string();
}

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(signal);
}

std::optional<int> signal_of_exit_status(std::optional<int> exit_status) {
  if (!exit_status || *exit_status <= 128 || *exit_status > 128 + 64) return std::nullopt;
  return *exit_status - 128;
}

std::string killed_text(int exit_status) {
  const std::optional<int> signal = signal_of_exit_status(exit_status);
  const std::string by = signal ? signal_name(*signal) : "a signal";
  return "killed by " + by + " (exit status " + std::to_string(exit_status) + ")";
}

}  // namespace nsel
