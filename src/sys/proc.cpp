#include "nsel/sys/proc.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

namespace nsel {
namespace fs = std::filesystem;

namespace {

std::string proc_path(pid_t pid, const char* file) {
  return "/proc/" + std::to_string(pid) + "/" + file;
}

bool is_pid_name(const std::string& name) {
  return !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
}

// The whole text of a /proc file, or "" when it cannot be read. Never throws: a process can end
// while it is read (the kernel then answers ESRCH, which iostreams turn into an exception).
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

}  // namespace

std::optional<ProcessStat> read_process_stat(pid_t pid) {
  const std::string text = read_proc_file(proc_path(pid, "stat"));
  const size_t name_end = text.rfind(')');  // the command name may hold spaces and ')'
  if (name_end == std::string::npos) return std::nullopt;
  ProcessStat stat;
  stat.pid = pid;
  const size_t name_begin = text.find('(');
  if (name_begin != std::string::npos && name_begin < name_end) {
    stat.name = text.substr(name_begin + 1, name_end - name_begin - 1);
  }
  std::istringstream fields(text.substr(name_end + 1));
  fields >> stat.state >> stat.parent >> stat.group;
  if (!fields) return std::nullopt;
  std::string skipped;
  for (int field = 6; field < 22 && fields; ++field) fields >> skipped;  // up to starttime
  fields >> stat.start_ticks;
  return stat;
}

std::vector<ProcessStat> read_process_table() {
  std::vector<ProcessStat> table;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (!is_pid_name(name)) continue;
    if (auto stat = read_process_stat(static_cast<pid_t>(std::stol(name)))) {
      table.push_back(std::move(*stat));
    }
  }
  std::sort(table.begin(), table.end(),
            [](const ProcessStat& a, const ProcessStat& b) { return a.pid < b.pid; });
  return table;
}

bool is_zombie(pid_t pid) {
  const auto stat = read_process_stat(pid);
  return stat && stat->state == 'Z';
}

std::vector<pid_t> child_processes(pid_t pid) {
  std::error_code ec;
  fs::directory_iterator tasks(proc_path(pid, "task"), ec);
  if (ec) return {};  // gone
  std::vector<pid_t> children;
  bool offered = false;
  for (const auto& task : tasks) {
    std::istringstream in(read_proc_file(task.path() / "children"));
    if (!fs::exists(task.path() / "children", ec)) continue;
    offered = true;
    long long child = 0;
    while (in >> child) children.push_back(static_cast<pid_t>(child));
  }
  if (offered) return children;
  // Kernels without children files: every process's parent, from the whole table.
  for (const ProcessStat& stat : read_process_table()) {
    if (stat.parent == pid) children.push_back(stat.pid);
  }
  return children;
}

fs::path process_executable(pid_t pid) {
  std::error_code ec;
  fs::path exe = fs::read_symlink(proc_path(pid, "exe"), ec);
  if (ec) return {};
  return exe;
}

namespace {

std::vector<std::string> split_at_nul(const std::string& text) {
  std::vector<std::string> words;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\0', begin);
    if (end == std::string::npos) end = text.size();
    words.emplace_back(text, begin, end - begin);
    begin = end + 1;
  }
  return words;
}

}  // namespace

std::vector<std::string> process_arguments(pid_t pid) {
  return split_at_nul(read_proc_file(proc_path(pid, "cmdline")));
}

std::vector<std::filesystem::path> process_open_files(pid_t pid) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(proc_path(pid, "fd"), ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code link_error;
    std::filesystem::path target = std::filesystem::read_symlink(it->path(), link_error);
    if (!link_error) files.push_back(std::move(target));
  }
  return files;
}

std::optional<std::string> process_environment_variable(pid_t pid, std::string_view name) {
  const std::string prefix = std::string(name) + "=";
  for (const std::string& entry : split_at_nul(read_proc_file(proc_path(pid, "environ")))) {
    if (entry.starts_with(prefix)) return entry.substr(prefix.size());
  }
  return std::nullopt;
}

bool process_environment_readable(pid_t pid) {
  return ::access(proc_path(pid, "environ").c_str(), R_OK) == 0;
}

namespace {

// "pid:[4026531836]" -> 4026531836.
std::optional<unsigned long long> namespace_inode(const std::string& link_path) {
  char target[64] = {};
  const ssize_t n = ::readlink(link_path.c_str(), target, sizeof target - 1);
  if (n <= 0) return std::nullopt;
  const std::string text(target, static_cast<size_t>(n));
  const size_t open = text.find('[');
  const size_t close = text.rfind(']');
  if (open == std::string::npos || close == std::string::npos || close <= open + 1) {
    return std::nullopt;
  }
  try {
    return std::stoull(text.substr(open + 1, close - open - 1));
  } catch (...) {
    return std::nullopt;
  }
}

// The numbers of the "NSpid:" line of /proc/<pid>/status: the process's id in /proc's PID
// namespace, then in each namespace below it, the last in its own.
std::vector<long long> namespace_ids(const std::string& status) {
  const size_t line = status.find("\nNSpid:");
  if (line == std::string::npos) return {};
  const size_t end = status.find('\n', line + 1);
  std::istringstream numbers(
      status.substr(line + 7, end == std::string::npos ? std::string::npos : end - line - 7));
  std::vector<long long> ids;
  for (long long id = 0; numbers >> id;) ids.push_back(id);
  return ids;
}

}  // namespace

std::optional<unsigned long long> own_pid_namespace() {
  return namespace_inode("/proc/self/ns/pid");
}

std::optional<std::string> kernel_boot_id() {
  std::string text = read_proc_file("/proc/sys/kernel/random/boot_id");
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return std::nullopt;
  return text;
}

NamespaceProcesses read_namespace_processes() {
  NamespaceProcesses seen;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (!is_pid_name(name)) continue;
    const auto ns = namespace_inode("/proc/" + name + "/ns/pid");
    const int link_error = errno;
    const std::string status = read_proc_file("/proc/" + name + "/status");
    const std::vector<long long> ids = namespace_ids(status);
    if (ns && !ids.empty()) {
      seen.pids[*ns].insert(ids.back());
      continue;
    }
    if (status.empty()) continue;  // gone meanwhile: nothing missed
    // A process we may not look at (non-dumpable, another user's) is in a namespace below /proc's
    // own only when NSpid gives it more than one id; with one it is no container's.
    if (ids.size() != 1 || (!ns && link_error != EACCES && link_error != EPERM)) {
      seen.complete = false;  // below ours, or a kernel without NSpid (before 4.1)
    }
  }
  if (ec) seen.complete = false;
  return seen;
}

}  // namespace nsel
