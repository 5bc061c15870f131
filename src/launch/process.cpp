#include "nsel/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "nsel/error.hpp"

extern char** environ;

namespace nsel {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

// True when `pid` has exited and waits to be reaped ("Z" in /proc/<pid>/stat).
bool is_zombie(pid_t pid) {
  const std::string stat = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t name_end = stat.rfind(')');  // the command name may hold spaces and ')'
  return name_end != std::string::npos && name_end + 2 < stat.size() && stat[name_end + 2] == 'Z';
}

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

volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_terminate_as = SIGTERM;

void forward_signal(int signal_number, siginfo_t* info, void*) {
  const pid_t child = g_child;
  if (child <= 0) return;
  // A terminal's Ctrl-C (si_code SI_KERNEL) already went to the whole foreground group.
  if (signal_number == SIGINT && info != nullptr && info->si_code == SI_KERNEL) return;
  kill(child, signal_number == SIGTERM ? static_cast<int>(g_terminate_as) : signal_number);
}

}  // namespace

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
                    bool own_process_group) {
  std::vector<std::string> arguments = argv;
  std::vector<std::string> environment = merged_environment(extra_environment);
  auto argument_pointers = pointers(arguments);
  auto environment_pointers = pointers(environment);
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
  }
  // The child starts with no blocked signals and default stop signals, whatever the caller has
  // blocked or ignored for itself (an ignored signal would survive the exec).
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
  pid_t child = 0;
  const int rc = posix_spawn(&child, arguments.front().c_str(), &actions, &attributes,
                             argument_pointers.data(), environment_pointers.data());
  posix_spawnattr_destroy(&attributes);
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

CapturedRun run_capturing(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CapturedRun result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return result;
  std::vector<std::string> arguments = argv;
  std::vector<std::string> environment = merged_environment({});
  auto argument_pointers = pointers(arguments);
  auto environment_pointers = pointers(environment);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attributes, &empty);
  posix_spawnattr_setpgroup(&attributes, 0);  // so a timeout can end what it started too
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  pid_t child = 0;
  const int rc = posix_spawn(&child, arguments.front().c_str(), &actions, &attributes,
                             argument_pointers.data(), environment_pointers.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    result.output = std::strerror(rc);
    return result;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      kill(-child, SIGKILL);
      break;
    }
    pollfd descriptor{fds[0], POLLIN, 0};
    if (poll(&descriptor, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (result.output.size() < (1u << 20)) result.output.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  result.exit_code = wait_exit_code(child);
  return result;
}

int run_supervised(const std::vector<std::string>& argv,
                   const std::vector<std::string>& extra_environment, int terminate_as,
                   pid_t* child_pid) {
  g_terminate_as = terminate_as;
  struct sigaction action {};
  action.sa_sigaction = forward_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  struct sigaction previous[3];
  const int forwarded[3] = {SIGINT, SIGTERM, SIGHUP};
  for (int i = 0; i < 3; ++i) sigaction(forwarded[i], &action, &previous[i]);
  // Held back until the child's id is known, so that no signal arriving in between is lost.
  sigset_t held, before;
  sigemptyset(&held);
  for (int signal_number : forwarded) sigaddset(&held, signal_number);
  sigprocmask(SIG_BLOCK, &held, &before);
  pid_t child = 0;
  try {
    child = spawn_process(argv, extra_environment);
  } catch (...) {
    sigprocmask(SIG_SETMASK, &before, nullptr);
    for (int i = 0; i < 3; ++i) sigaction(forwarded[i], &previous[i], nullptr);
    throw;
  }
  g_child = child;
  sigprocmask(SIG_SETMASK, &before, nullptr);
  if (child_pid != nullptr) *child_pid = child;
  const int code = wait_exit_code(child);
  g_child = 0;
  for (int i = 0; i < 3; ++i) sigaction(forwarded[i], &previous[i], nullptr);
  return code;
}

int stop_nsys_agents(pid_t nsys_pid, int grace_ms) {
  namespace fs = std::filesystem;
  const std::string session_suffix = "-" + std::to_string(nsys_pid);
  std::vector<pid_t> agents;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = read_proc_file(entry.path() / "cmdline");
    bool is_agent = false;
    bool ours = false;
    size_t begin = 0;
    while (begin < cmdline.size()) {
      size_t end = cmdline.find('\0', begin);
      if (end == std::string::npos) end = cmdline.size();
      const std::string_view argument(cmdline.data() + begin, end - begin);
      if (argument == "--start-agent") is_agent = true;
      if (argument.starts_with("--session-name=profile-") && argument.ends_with(session_suffix)) {
        ours = true;
      }
      begin = end + 1;
    }
    if (is_agent && ours) agents.push_back(static_cast<pid_t>(std::stol(name)));
  }
  for (pid_t agent : agents) kill(agent, SIGTERM);
  // Agents that have gone are dropped from the list, so no late SIGKILL can hit a reused pid. An
  // agent's parent is init, which may reap it late: a zombie has ended too.
  const auto drop_ended = [&] {
    std::erase_if(agents, [](pid_t agent) { return kill(agent, 0) != 0 || is_zombie(agent); });
  };
  const size_t found = agents.size();
  for (int waited = 0; waited < grace_ms && !agents.empty(); waited += 20) {
    usleep(20 * 1000);
    drop_ended();
  }
  for (pid_t agent : agents) {
    kill(agent, SIGKILL);
    // A killed agent cannot remove its shared-memory instance; stale ones pile up otherwise.
    fs::remove("/dev/shm/quadd-agent-instance-" + std::to_string(agent), ec);
  }
  return static_cast<int>(found);
}

std::string read_proc_file(const std::string& path) noexcept {
  try {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::string text;
    char buffer[4096];
    while (true) {
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buffer, static_cast<size_t>(n));
    }
    close(fd);
    return text;
  } catch (...) {
    return {};  // out of memory: as unreadable
  }
}

}  // namespace nsel
