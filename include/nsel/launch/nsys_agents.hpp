// The `nsys --start-agent` daemons that an nsys front end leaves behind.
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace nsel {

// Ends the `nsys --start-agent` daemons that the nsys front end `nsys_pid` started (their
// session is named profile-<program>-<nsys_pid>): they can outlive nsys and spin a core for
// minutes. SIGTERM, then SIGKILL after `grace_ms`. Returns how many were found. Then removes the
// shared-memory instance (/dev/shm/quadd-agent-instance-<pid>) of every agent of this user that
// has ended since `since` without removing its own: one killed, or one that died with a start
// nsys failed (Nsight Systems 2022.4, seen in 1 of about 15 starts of two sessions together).
int stop_nsys_agents(pid_t nsys_pid, std::filesystem::file_time_type since, int grace_ms = 1000);

}  // namespace nsel
