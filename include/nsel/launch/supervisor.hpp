// Running `nsys profile ... PROGRAM` so that its report survives the launcher being stopped:
// schedulers (SLURM, Ray, Kubernetes) send SIGTERM and then SIGKILL to the launcher's whole
// process group, and a SIGTERM to nsys itself loses the report.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "nsel/sys/files.hpp"

namespace nsel {

// How nsys ended.
struct SupervisionEnd {
  // nsys's exit code (the program's; 128 + N for a signal N), or 128 + SIGKILL when the stop
  // timeout expired and nsys or the program had to be ended by nsel.
  int exit_code = 0;
  bool stop_timed_out = false;  // NSEL_STOP_TIMEOUT expired: nsys was interrupted
};

struct SupervisionOptions {
  // How long nsys may take to finish the report once the program has ended or has been asked to
  // stop. Then nsys gets SIGINT, and kKillGrace later whatever is left gets SIGKILL.
  std::chrono::milliseconds stop_timeout{std::chrono::seconds(60)};
  // Run in the keeper, so that they happen even when the launcher is killed: once nsys has
  // started (with its process id), and once it has ended and its agents are gone; on_finished
  // returns the exit code to pass on (a lost capture may turn a 0 into a failure).
  std::function<void(pid_t nsys)> on_started;
  std::function<int(const SupervisionEnd& end)> on_finished;
  // Asked when nsys has failed (exit status not 0): true when it is certain that the program
  // never began (nsel's step never executed it), and what on_started did is undone;
  // nsys is then started again (kNsysStartAttempts in all), its start-up failure said.
  std::function<bool()> program_never_began;
  // Run in the keeper while it holds the start turn, before nsys first starts: a non-empty
  // answer is an error line (said as "nsel: error: ..."), and nothing starts (exit 1).
  std::function<std::string()> under_start_turn;
};

// How many times nsys is started for one program that never began: nsys's own start-up
// failures (sessions started together: "End of file", "Local Endpoint is not available").
inline constexpr int kNsysStartAttempts = 3;

inline constexpr std::chrono::seconds kKillGrace{5};

// The lock by which the keepers of one user take turns to start nsys on a machine: each holds it
// from starting nsys until its program runs (at most 15 s), and waits at most 30 s for it.
// Nsight Systems sessions started at the same moment sometimes fail (docs/nsys-facts.md).
// /dev/shm/nsel-nsys-start-<uid>.lock, or in /tmp where there is no /dev/shm.
std::filesystem::path nsys_start_turn_lock();

// Where nsys runs the sessions of one PID namespace at a time on a machine (2022.4), each launch
// of this user holds a claim for its whole run: a file beside the start-turn lock named with its
// PID namespace, locked while open (flock reaches across PID namespaces). Taken by the keeper
// under the start turn (SupervisionOptions::under_start_turn), so that of two launches starting
// together the second sees the first: `conflict` then names a live claim of another namespace
// ("PID namespace 4026532175 (nsel pid 22 there)") and `held` is empty; else `held` is this
// launch's claim. Claims of ended launches are removed on the way.
struct NsysNamespaceClaim {
  FileLock held;
  std::string conflict;
};
NsysNamespaceClaim claim_nsys_pid_namespace();
// The same look without a claim or the turn (before anything is said or started), or "".
std::string nsys_pid_namespace_in_use_elsewhere();

// Runs `command` (nsys profile ... PROGRAM ARGS, argv[0] absolute) with `extra_environment`
// added, and returns its exit code (nsys passes on the program's; 128 + N for a signal N).
//
// A keeper process in a session of its own runs nsys, so a signal to the launcher's process
// group never reaches nsys or the program (nsys starts the program in a session of its own).
// SIGTERM, SIGINT or SIGHUP sent to the caller, or the caller's death (even by SIGKILL), makes
// the keeper pass that signal (SIGTERM for a death) to the program's process group only: the
// program ends, nsys writes the report, and the keeper waits for it at most `stop_timeout`.
// Whatever happens, the keeper ends the nsys agent daemons of the session once nsys has ended,
// and nothing of a program it was told to stop outlives it (killed at `stop_timeout` when nsys,
// signalled too, ended first).
//
// Forks: call it from a single-threaded process (the nsel command line).
int run_profiled(const std::vector<std::string>& command,
                 const std::vector<std::string>& extra_environment,
                 const SupervisionOptions& options = {});

}  // namespace nsel
