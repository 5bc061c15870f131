#include "launch/stop_signals.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace nsel {
namespace {

volatile sig_atomic_t g_signal_fd = -1;

void write_signal_number(int signal_number) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(signal_number);
  // A socket, so that a launcher whose keeper has gone gets EPIPE here, never SIGPIPE.
  if (g_signal_fd >= 0) {
    ssize_t ignored = send(g_signal_fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
  }
  errno = saved;
}

}  // namespace

void write_signals_to(int fd) {
  g_signal_fd = fd;
}

void install_signal_writer(int signal_number, struct sigaction* previous) {
  struct sigaction action {};
  action.sa_handler = write_signal_number;
  action.sa_flags = SA_RESTART | (signal_number == SIGCHLD ? SA_NOCLDSTOP : 0);
  sigemptyset(&action.sa_mask);
  sigaction(signal_number, &action, previous);
}

sigset_t stop_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal_number : kStopSignals) sigaddset(&set, signal_number);
  return set;
}

}  // namespace nsel
