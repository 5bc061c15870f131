// nsel-as-started STATE -- PROGRAM [ARGS...]: nsel exec's own step between nsys and the program
// (never typed by a user). Gives back what nsel exec was started with (include/nsel/launch/
// as_started.hpp) and executes PROGRAM, a path, in this process. Linked statically, so that
// nsys's injection never loads here. A malformed command is one line and exit 2; a program that
// cannot be executed, one line and exit 127.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "nsel/core/capture.hpp"
#include "nsel/launch/as_started.hpp"

int main(int argc, char** argv) {
  if (argc < 4 || std::string_view(argv[2]) != "--") {
    std::fprintf(stderr,
                 "nsel-as-started: expected STATE -- PROGRAM [ARGS...]; this step is nsel "
                 "exec's own, never typed\n");
    return 2;
  }
  std::string why;
  const auto state = nsel::decode_inherited_state(argv[1], why);
  if (!state) {
    std::fprintf(stderr, "nsel-as-started: STATE '%s': %s; this step is nsel exec's own\n", argv[1],
                 why.c_str());
    return 2;
  }
  if (const std::string missed = nsel::restore_inherited_state(*state); !missed.empty()) {
    std::fprintf(stderr, "nsel: warning: the profiled program runs without its own %s\n",
                 missed.c_str());
  }
  // Told to nsel exec's step record: the program begins now (so nsys is never started again).
  if (const char* record = std::getenv(std::string(nsel::kStepRecordVariable).c_str())) {
    const int fd = ::open(record, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
      const std::string line = std::string(nsel::kStepRecordBegan) + "\n" +
                               std::string(nsel::kStepRecordPid) + " " +
                               std::to_string(::getpid()) + "\n";
      const ssize_t written = ::write(fd, line.data(), line.size());
      (void)written;
      ::close(fd);
    }
  }
  ::execv(argv[3], argv + 3);
  std::fprintf(stderr, "nsel-as-started: cannot run '%s': %s\n", argv[3], std::strerror(errno));
  return 127;
}
