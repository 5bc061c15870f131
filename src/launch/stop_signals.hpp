// The stop signals (SIGTERM, SIGINT, SIGHUP) on both sides of run_profiled: the launcher passes
// them to the keeper, the keeper takes its own through a self-pipe. A handler writes the signal's
// number as one byte to a socket, which is all a handler may safely do.
#pragma once

#include <signal.h>

namespace nsel {

inline constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};

// Where the handlers write from now on (a socket's descriptor); -1: nowhere.
void write_signals_to(int fd);

// Makes `signal_number` write its number as above (SIGCHLD without stops), saving the action it
// had in `previous` when given.
void install_signal_writer(int signal_number, struct sigaction* previous = nullptr);

// kStopSignals as a set.
sigset_t stop_signal_set();

}  // namespace nsel
