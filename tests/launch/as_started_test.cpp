// The state a profiled program gets back: its one-word form round-trips, a malformed word is
// refused with the reason, and giving it back in a child process sets exactly the umask, ignored
// and blocked signals and soft limits taken (the end-to-end comparison with and without nsys is in
// tests/e2e/integration_test.cpp).
#include "nsel/launch/as_started.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

TEST(AsStarted, TheStateRoundTripsThroughItsWord) {
  nsel::InheritedState state;
  state.umask = 027;
  state.ignored = (1ull << 0) | (1ull << 31) | (1ull << 32);
  state.blocked = 1ull << 9;
  state.soft_limits = {{7, 512}, {3, static_cast<std::uint64_t>(RLIM_INFINITY)}};
  std::string why;
  const std::string word = nsel::encode_inherited_state(state);
  EXPECT_EQ(nsel::decode_inherited_state(word, why), state) << word << ": " << why;
  EXPECT_EQ(
      nsel::decode_inherited_state(nsel::encode_inherited_state(nsel::inherited_state_now()), why),
      nsel::inherited_state_now());
}

TEST(AsStarted, AMalformedWordIsRefusedWithTheReason) {
  for (const char* word : {"", "u", "i0", "u1777", "u22,x1", "u22,l99=1", "u22,l7", "u22,l7=x",
                           "u22,ifff,", "u22,b-1"}) {
    std::string why;
    EXPECT_EQ(nsel::decode_inherited_state(word, why), std::nullopt)
        << "accepted: '" << word << "'";
    EXPECT_FALSE(why.empty()) << word;
  }
}

// In a child: nsys's state (umask 0, signals 32 and 33 ignored, nothing blocked) is replaced by
// the one taken, and the kernel shows exactly that.
TEST(AsStarted, GivingTheStateBackSetsWhatTheKernelShows) {
  nsel::InheritedState wanted;
  wanted.umask = 027;
  wanted.ignored = 1ull << (SIGHUP - 1);
  wanted.blocked = 1ull << (SIGUSR1 - 1);
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  const std::uint64_t lower = files.rlim_cur > 64 ? 64 : files.rlim_cur;
  wanted.soft_limits = {{RLIMIT_NOFILE, lower}};
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::umask(0);
    unsigned long ignore[4] = {1, 0, 0, 0};
    ::syscall(SYS_rt_sigaction, 32, ignore, nullptr, 8);
    ::syscall(SYS_rt_sigaction, 33, ignore, nullptr, 8);
    const std::string missed = nsel::restore_inherited_state(wanted);
    const nsel::InheritedState now = nsel::inherited_state_now();
    rlimit after{};
    getrlimit(RLIMIT_NOFILE, &after);
    const bool same = missed.empty() && now.umask == wanted.umask &&
                      now.ignored == wanted.ignored && now.blocked == wanted.blocked &&
                      after.rlim_cur == lower;
    const char answer = same ? 'y' : 'n';
    (void)!::write(pipe_fds[1], &answer, 1);
    _exit(0);
  }
  close(pipe_fds[1]);
  char answer = '?';
  EXPECT_EQ(read(pipe_fds[0], &answer, 1), 1);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(answer, 'y');
}

}  // namespace
