#include "launch/nsys_process_tree.hpp"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "nsel/sys/proc.hpp"

namespace nsel {
namespace fs = std::filesystem;
NsysPart classify_process(pid_t pid, const std::string& install_folder) {
  static const fs::path self = process_executable(getpid());
  const fs::path exe = process_executable(pid);
  if (exe.empty()) return NsysPart::unknown;
  const std::string text = exe.string();
  const bool in_nsys = (!install_folder.empty() && text.starts_with(install_folder)) ||
                       text.find("nsight-systems") != std::string::npos ||
                       exe.filename().string().starts_with("nsys") || exe == self;
  return in_nsys ? NsysPart::nsys : NsysPart::program;
}

std::string nsys_install_folder(const std::string& nsys) {
  std::error_code ec;
  const fs::path real = fs::canonical(nsys, ec);
  if (ec) return {};
  return real.parent_path().parent_path().string() + "/";
}

std::optional<pid_t> find_profiled_program(pid_t root, const std::string& install_folder) {
  // Level by level from `root`: the program is found within a level or two, without reading the
  // whole process table.
  std::vector<pid_t> level = {root};
  while (!level.empty()) {
    std::optional<ProcessStat> best;
    std::vector<pid_t> next;
    for (pid_t parent : level) {
      for (pid_t child : child_processes(parent)) {
        next.push_back(child);
        // Not yet readable, or gone: looked at again on the next call.
        if (classify_process(child, install_folder) != NsysPart::program) continue;
        const auto process = read_process_stat(child);
        if (process && (!best || process->start_ticks < best->start_ticks)) best = process;
      }
    }
    if (best) return best->pid;
    level = std::move(next);
  }
  return std::nullopt;
}

std::vector<int> descendant_process_groups(int leader, const std::string& install_folder) {
  std::map<int, ProcessStat> table;
  std::map<int, std::vector<int>> children;
  for (ProcessStat& row : read_process_table()) {
    children[row.parent].push_back(row.pid);
    table.emplace(row.pid, std::move(row));
  }
  std::set<int> groups;
  std::vector<int> pending = {leader};
  std::set<int> seen;
  while (!pending.empty()) {
    const int pid = pending.back();
    pending.pop_back();
    if (!seen.insert(pid).second) continue;
    const auto it = table.find(pid);
    if (pid != leader && it != table.end() && it->second.state != 'Z' &&
        it->second.group != leader && it->second.group != 0 &&
        classify_process(pid, install_folder) != NsysPart::nsys) {
      groups.insert(it->second.group);
    }
    const auto kids = children.find(pid);
    if (kids != children.end()) {
      pending.insert(pending.end(), kids->second.begin(), kids->second.end());
    }
  }
  return {groups.begin(), groups.end()};
}

bool launcher_exited(pid_t nsys) {
  for (const ProcessStat& row : read_process_table()) {
    if (row.parent == nsys && row.state == 'Z' && row.name == "nsys-launcher") return true;
  }
  return false;
}

}  // namespace nsel
