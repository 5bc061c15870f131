// A stop signal inside the NVTX capture window ends the program by that signal, even when nsys's
// injection never returns from nvtxRangeEnd (tests/step/hanging_nvtx_injection.c stands in for
// it). Its own executable: NVTX loads its injection once per process, at the first NVTX call.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "nsel/core/capture.hpp"
#include "nsel/step/step.hpp"

namespace {

namespace fs = std::filesystem;

// Waits up to `limit` for `child` to end; kills it when it does not. Returns its wait status,
// or -1 when it had to be killed.
int wait_bounded(pid_t child, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(child, &status, WNOHANG) == child) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  return -1;
}

TEST(StopSignal, EndsTheProgramByItsSignalWhenNsysNeverAcknowledgesTheRangeEnd) {
  const fs::path mark = fs::temp_directory_path() / ("nsel-range-end-" + std::to_string(getpid()));
  const fs::path said = mark.string() + ".stderr";
  fs::remove(mark);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    const int err = open(said.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (err < 0 || dup2(err, STDERR_FILENO) < 0) _exit(5);
    setenv("NVTX_INJECTION64_PATH", NSEL_HANGING_NVTX_INJECTION, 1);
    setenv("NSEL_TEST_RANGE_END_MARK", mark.c_str(), 1);
    setenv(std::string(nsel::kStepStopHandoverVariable).c_str(), "100", 1);
    auto backend = nsel::make_capture_backend(nsel::CaptureMode::nvtx);
    if (!backend->start()) _exit(3);
    const char byte = 'o';
    if (write(ready[1], &byte, 1) != 1) _exit(4);
    for (;;) pause();
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the capture range did not open";
  close(ready[0]);
  ASSERT_EQ(kill(child, SIGTERM), 0);
  // The handler bounds nvtxRangeEnd at 3 s, then hands over for 0.1 s: 30 s is only a backstop.
  const int status = wait_bounded(child, std::chrono::seconds(30));
  ASSERT_NE(status, -1) << "the program hung in nvtxRangeEnd after SIGTERM";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "wait status " << status;
  EXPECT_TRUE(fs::exists(mark)) << "the stand-in's nvtxRangeEnd was never reached";
  std::ifstream in(said);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text,
            "nsel: nsys did not acknowledge the end of the NVTX capture range within 3 s of the "
            "stop signal (nsys has ended?); the program ends now\n");
  fs::remove(mark);
  fs::remove(said);
}

}  // namespace
