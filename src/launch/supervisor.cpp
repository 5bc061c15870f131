// The launcher's side of run_profiled: it forks the keeper and passes its stop signals on.
#include "nsel/launch/supervisor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "launch/keeper.hpp"
#include "launch/stop_signals.hpp"
#include "nsel/core/error.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {

int run_profiled(const std::vector<std::string>& command,
                 const std::vector<std::string>& extra_environment,
                 const SupervisionOptions& options) {
  int control[2];
  int status[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) != 0) {
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno), 1);
  }
  if (pipe2(status, O_CLOEXEC) != 0) {
    close(control[0]);
    close(control[1]);
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno), 1);
  }
  // Held back until the handlers are in place on both sides of the fork.
  const sigset_t held = stop_signal_set();
  sigset_t before;
  sigprocmask(SIG_BLOCK, &held, &before);
  struct sigaction previous[3];
  write_signals_to(control[1]);
  for (int i = 0; i < 3; ++i) install_signal_writer(kStopSignals[i], &previous[i]);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t keeper = fork();
  if (keeper == 0) {
    close(control[1]);
    close(status[0]);
    write_signals_to(-1);
    keeper_main(command, extra_environment, options, control[0], status[1]);
  }
  close(control[0]);
  close(status[1]);
  const auto restore = [&] {
    for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &previous[i], nullptr);
    sigprocmask(SIG_SETMASK, &before, nullptr);
    write_signals_to(-1);
    close(control[1]);
    close(status[0]);
  };
  if (keeper < 0) {
    const int error = errno;
    restore();
    throw Error(std::string("cannot fork: ") + std::strerror(error), 1);
  }
  sigprocmask(SIG_SETMASK, &before, nullptr);
  sigprocmask(SIG_UNBLOCK, &held, nullptr);

  // The keeper sends the exit code as one byte when nsys has ended and its agents are gone.
  unsigned char byte = 0;
  ssize_t n = 0;
  while ((n = read(status[0], &byte, 1)) < 0 && errno == EINTR) {
  }
  const int keeper_code = wait_exit_code(keeper);
  restore();
  return n == 1 ? byte : keeper_code;
}

}  // namespace nsel
