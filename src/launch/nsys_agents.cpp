#include "nsel/launch/nsys_agents.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/sys/proc.hpp"

namespace nsel {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kAgentInstance = "quadd-agent-instance-";

// An agent's instance file whose agent has ended: this user's, made since `since` (an older one
// is another run's business), named for a process that no longer runs (or is a zombie, which
// init may reap late). A file only a live agent uses is never touched.
void remove_ended_agents_instances(fs::file_time_type since) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev/shm", ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kAgentInstance)) continue;
    const std::string digits = name.substr(kAgentInstance.size());
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const auto agent = static_cast<pid_t>(std::stol(digits));
    struct stat info {};
    if (::lstat(entry.path().c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
        info.st_uid != ::geteuid()) {
      continue;
    }
    std::error_code time_ec;
    if (entry.last_write_time(time_ec) < since || time_ec) continue;
    if ((::kill(agent, 0) == 0 || errno != ESRCH) && !is_zombie(agent)) continue;
    std::error_code removed;
    fs::remove(entry.path(), removed);
  }
}

}  // namespace

int stop_nsys_agents(pid_t nsys_pid, fs::file_time_type since, int grace_ms) {
  const std::string session_suffix = "-" + std::to_string(nsys_pid);
  std::vector<pid_t> agents;
  for (const ProcessStat& process : read_process_table()) {
    bool is_agent = false;
    bool ours = false;
    for (const std::string& argument : process_arguments(process.pid)) {
      if (argument == "--start-agent") is_agent = true;
      if (argument.starts_with("--session-name=profile-") && argument.ends_with(session_suffix)) {
        ours = true;
      }
    }
    if (is_agent && ours) agents.push_back(process.pid);
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
  for (pid_t agent : agents) kill(agent, SIGKILL);
  // A killed agent cannot remove its shared-memory instance, and one that died at a failed start
  // did not: stale ones pile up otherwise (and a batch system counts them as the job's leftovers).
  for (pid_t agent : agents) {
    for (int waited = 0; waited < 500 && kill(agent, 0) == 0 && !is_zombie(agent); waited += 10) {
      usleep(10 * 1000);
    }
  }
  remove_ended_agents_instances(since);
  return static_cast<int>(found);
}

}  // namespace nsel
