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

// `nsys sessions list` as 2022.4 and 2023.4 printed it here while a profile ran.
TEST(OpenRangeSession, FindsTheFrontEndsSessionWhileItsRangeIsOpen) {
  const std::string old_listing =
      "              ID         TIME                       STATE LAUNCH NAME\n"
      "          102145        00:01             RangeCollection      1 "
      "profile-nsel-example-worker-2126\n";
  const std::string new_listing =
      "              ID         TIME                       STATE LAUNCH NAME\n"
      "          101825        00:02             RangeCollection      1 profile-18030\n"
      "          101826        00:02             RangeCollection      1 profile-1803\n";
  EXPECT_EQ(nsel::open_range_session(old_listing, 2126), "profile-nsel-example-worker-2126");
  EXPECT_EQ(nsel::open_range_session(new_listing, 1803), "profile-1803");
  EXPECT_EQ(nsel::open_range_session(new_listing, 18030), "profile-18030");
  EXPECT_EQ(nsel::open_range_session(new_listing, 803), std::nullopt);
  EXPECT_EQ(nsel::open_range_session("", 1803), std::nullopt);
}

TEST(OpenRangeSession, IgnoresASessionWaitingForItsRangeOrWritingItsReport) {
  // Before the window (StartRange) `nsys stop` ended 2022.4's session without a report; after it
  // (RangeGeneration) the report is being written already.
  for (const char* state : {"StartRange", "RangeGeneration"}) {
    const std::string listing = std::string("              ID   TIME   STATE LAUNCH NAME\n") +
                                "  102346  00:00  " + state + "  1 profile-2327\n";
    EXPECT_EQ(nsel::open_range_session(listing, 2327), std::nullopt) << state;
  }
}
