// nsel ends the nsys agents of its own session only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>

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
  EXPECT_EQ(nsel::stop_nsys_agents(fake_nsys, std::filesystem::file_time_type::clock::now(), 500),
            1);
  EXPECT_EQ(nsel::wait_exit_code(ours), 128 + SIGTERM);
  EXPECT_EQ(kill(other, 0), 0) << "another session's agent must be left alone";
  kill(-other, SIGKILL);
  kill(-ours, SIGKILL);
  nsel::wait_exit_code(other);
}

// An agent that died without removing its shared-memory instance (seen when nsys 2022.4 failed at
// a start beside another session's, which nsel then starts again): the instance is removed once
// nsys has ended. A live agent's instance, and one older than this nsys, are left alone.
TEST(StopNsysAgents, RemovesTheInstancesOfAgentsThatEndedWithoutRemovingThem) {
  namespace fs = std::filesystem;
  const auto instance = [](pid_t pid) {
    return fs::path("/dev/shm") / ("quadd-agent-instance-" + std::to_string(pid));
  };
  const pid_t live =
      nsel::spawn_process({"/bin/sh", "-c", "sleep 30"}, {}, "", nsel::ChildOutput::discard, true);
  const pid_t ended = nsel::spawn_process({"/bin/true"}, {}, "", nsel::ChildOutput::discard);
  ASSERT_EQ(nsel::wait_exit_code(ended), 0);
  const pid_t older = nsel::spawn_process({"/bin/true"}, {}, "", nsel::ChildOutput::discard);
  ASSERT_EQ(nsel::wait_exit_code(older), 0);
  for (pid_t pid : {live, ended, older}) {
    ASSERT_FALSE(fs::exists(instance(pid))) << "another run's file: " << instance(pid);
  }
  std::ofstream(instance(older)) << "x";
  fs::last_write_time(instance(older), fs::file_time_type::clock::now() - std::chrono::hours(1));
  const auto since = fs::file_time_type::clock::now() - std::chrono::seconds(1);
  std::ofstream(instance(live)) << "x";
  std::ofstream(instance(ended)) << "x";
  EXPECT_EQ(nsel::stop_nsys_agents(999998, since, 100), 0);
  EXPECT_FALSE(fs::exists(instance(ended)));
  EXPECT_TRUE(fs::exists(instance(live))) << "a live agent's instance must be left alone";
  EXPECT_TRUE(fs::exists(instance(older))) << "an instance older than this nsys is not its";
  for (pid_t pid : {live, ended, older}) fs::remove(instance(pid));
  kill(-live, SIGKILL);
  nsel::wait_exit_code(live);
}
