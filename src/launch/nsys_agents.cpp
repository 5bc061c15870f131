#include "nsel/launch/nsys_agents.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "nsel/sys/proc.hpp"
#include "nsel/sys/process.hpp"

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

std::optional<std::string> open_range_session(std::string_view sessions_list, pid_t nsys_pid) {
  // Rows of "ID TIME STATE LAUNCH NAME"; the name is the last column and has no spaces.
  const std::string suffix = "-" + std::to_string(nsys_pid);
  std::istringstream lines{std::string(sessions_list)};
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream columns(line);
    std::vector<std::string> fields;
    for (std::string field; columns >> field;) fields.push_back(field);
    if (fields.size() < 5) continue;
    const std::string& name = fields.back();
    if (!name.starts_with("profile-") || !name.ends_with(suffix)) continue;
    if (fields[2] == "RangeCollection") return name;
    return std::nullopt;
  }
  return std::nullopt;
}

bool stop_open_collection(const std::string& nsys, pid_t nsys_pid,
                          std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  const CapturedRun list = run_capturing({nsys, "sessions", "list"}, timeout);
  if (list.timed_out || list.exit_code != 0) return false;
  const std::optional<std::string> session = open_range_session(list.output, nsys_pid);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (!session || left <= std::chrono::milliseconds(0)) return false;
  // nsys stop returns once the report is written (0.8 to 2 s here); the program runs on meanwhile.
  const CapturedRun stop = run_capturing({nsys, "stop", "--session=" + *session}, left);
  return !stop.timed_out && stop.exit_code == 0;
}

}  // namespace nsel
