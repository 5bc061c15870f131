#include "nsel/launch/nsys_agents.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "nsel/sys/proc.hpp"

namespace nsel {

int stop_nsys_agents(pid_t nsys_pid, int grace_ms) {
  namespace fs = std::filesystem;
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
  std::error_code ec;
  for (pid_t agent : agents) {
    kill(agent, SIGKILL);
    // A killed agent cannot remove its shared-memory instance; stale ones pile up otherwise.
    fs::remove("/dev/shm/quadd-agent-instance-" + std::to_string(agent), ec);
  }
  return static_cast<int>(found);
}

}  // namespace nsel
