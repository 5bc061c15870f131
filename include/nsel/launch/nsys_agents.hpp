// The `nsys --start-agent` daemons that an nsys front end leaves behind.
#pragma once

#include <sys/types.h>

namespace nsel {

// Ends the `nsys --start-agent` daemons that the nsys front end `nsys_pid` started (their
// session is named profile-<program>-<nsys_pid>): they can outlive nsys and spin a core for
// minutes. SIGTERM, then SIGKILL after `grace_ms`. Returns how many were found.
int stop_nsys_agents(pid_t nsys_pid, int grace_ms = 1000);

}  // namespace nsel
