// nsel exec: run one worker process, under nsys when it is selected, bare otherwise.
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/identity.hpp"
#include "nsel/sys/process.hpp"
#include "nsel/workflow/run_worker.hpp"

namespace nsel::cli {
namespace {

struct ExecOptions {
  std::string worker;
  std::string output_dir;
  std::string capture;
};

}  // namespace

Action add_exec(CLI::App& app) {
  auto options = std::make_shared<ExecOptions>();
  CLI::App* exec = app.add_subcommand(
      "exec",
      "Run PROGRAM as worker NAME. When NAME matches NRL_NSYS_WORKER_PATTERNS, PROGRAM runs\n"
      "under 'nsys profile' and its report is DIR/<NAME>_<start>:<stop>_<PID>.nsys-rep (PID:\n"
      "PROGRAM's process id); otherwise nsel replaces itself with PROGRAM (no nsys, no extra\n"
      "process). PROGRAM is the absolute path PATH gives, never another interpreter.\n"
      "A report name already taken (the same PID from another PID namespace) gives\n"
      "<NAME>_<start>:<stop>_<PID>-<k>.nsys-rep (k from 2); the report's folder is checked\n"
      "(writable, names long enough) before PROGRAM starts.\n"
      "PROGRAM's exit code is nsel's, but 1 when PROGRAM exited 0 and its capture was lost\n"
      "(the manifest's state says why: disk_full, not_writable, ...).\n"
      "On SIGTERM, SIGINT or SIGHUP (or when nsel is killed)\n"
      "PROGRAM gets the signal and nsys writes the report; nsys and PROGRAM run in a session\n"
      "of their own, so a kill of nsel's process group never reaches them. NSEL_STOP_TIMEOUT\n"
      "(seconds, default 60) bounds the wait for the report; NSEL_ALLOW_UNPROFILED=1 runs a\n"
      "selected worker bare on a node without a usable nsys.\nCapture follows the node: the CUDA "
      "profiler API with a\n"
      "usable GPU, an NVTX range otherwise (the program's nsel_step() calls agree).\n"
      "NSEL_PROFILE_RANKS, NSEL_PROFILE_LOCAL_RANKS and NSEL_PROFILE_NODES narrow the selection\n"
      "by rank and node; several windows (NRL_NSYS_PROFILE_STEP_RANGE=2:4,10:12) give one\n"
      "report per window, DIR/<NAME>_<start>:<stop>_<PID>.nsys-rep, from one nsys session.\n"
      "Usage: nsel exec --worker NAME [--output-dir DIR] [--capture MODE] [--rank N]\n"
      "                 [--local-rank N] [--node NAME] -- PROGRAM [ARGS...]");
  exec->add_option("--worker", options->worker, "the worker's name, matched against the patterns")
      ->required()
      ->type_name("NAME");
  exec->add_option("--output-dir", options->output_dir,
                   "folder for the report (created if missing; default: the working directory)")
      ->type_name("DIR");
  exec->add_option("--capture", options->capture,
                   "force the capture mode: auto|cuda|nvtx|none (default: NSEL_CAPTURE or auto)")
      ->type_name("MODE");
  const auto identity = add_identity_flags(exec);

  return [options, identity](const std::vector<std::string>& program) -> int {
    WorkerRequest request{options->worker,  options->output_dir,
                          options->capture, given_identity(*identity),
                          program,          environment_variable};
    return run_worker(request, tell_line);
  };
}

}  // namespace nsel::cli
