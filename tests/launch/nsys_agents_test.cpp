// nsel ends the nsys agents of its own session only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>

#include "nsel/launch/nsys_agents.hpp"
#include "nsel/sys/process.hpp"

TEST(StopNsysAgents, EndsOnlyTheAgentsOfTheGivenSession) {
  // Stand-ins with an nsys agent's command line: `sh -c 'sleep 30' --start-agent --session-name=`.
  const pid_t fake_nsys = 999999;
  // Each in a group of its own with its output discarded, so that its `sleep` neither holds the
  // test runner's output open nor outlives the test.
  const auto stand_in = [](const char* session) {
    return nsel::spawn_process({"/bin/sh", "-c", "sleep 30", "--start-agent", session}, {}, "",
                               nsel::ChildOutput::discard, true);
  };
  const pid_t ours = stand_in("--session-name=profile-prog-999999");
  const pid_t other = stand_in("--session-name=profile-prog-9999990");
  usleep(100 * 1000);
  EXPECT_EQ(nsel::stop_nsys_agents(fake_nsys, 500), 1);
  EXPECT_EQ(nsel::wait_exit_code(ours), 128 + SIGTERM);
  EXPECT_EQ(kill(other, 0), 0) << "another session's agent must be left alone";
  kill(-other, SIGKILL);
  kill(-ours, SIGKILL);
  nsel::wait_exit_code(other);
}
