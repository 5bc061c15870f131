// The `nsys --start-agent` daemons that an nsys front end leaves behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace nsel {

// Ends the `nsys --start-agent` daemons that the nsys front end `nsys_pid` started (their
// session is named profile-<program>-<nsys_pid>): they can outlive nsys and spin a core for
// minutes. SIGTERM, then SIGKILL after `grace_ms`. Returns how many were found.
int stop_nsys_agents(pid_t nsys_pid, int grace_ms = 1000);

// From `nsys sessions list` output: the name of the session of the front end `nsys_pid`
// (2022.4: profile-<program>-<pid>, 2023.4: profile-<pid>) when its capture range is open (state
// RangeCollection); nullopt otherwise (waiting for the range, writing the report, or gone).
std::optional<std::string> open_range_session(std::string_view sessions_list, pid_t nsys_pid);

// Has `nsys` end the open capture range of the front end `nsys_pid` (`nsys stop`), so that the
// program's injection hands its buffers over while the program still runs. Does nothing when no
// range is open. Bounded by `timeout` in all. True when it stopped a collection.
bool stop_open_collection(const std::string& nsys, pid_t nsys_pid,
                          std::chrono::milliseconds timeout);

}  // namespace nsel
