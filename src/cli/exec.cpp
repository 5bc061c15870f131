// nsel exec: run one worker process, under nsys when it is selected, bare otherwise.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "cli/identity.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/launch_settings.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/values.hpp"
#include "nsel/launch/manifest_recorder.hpp"
#include "nsel/launch/nsys_check.hpp"
#include "nsel/launch/supervisor.hpp"
#include "nsel/reports/window_reports.hpp"
#include "nsel/step/gpu_probe.hpp"
#include "nsel/sys/process.hpp"

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
      "PROGRAM's exit code is nsel's. On SIGTERM, SIGINT or SIGHUP (or when nsel is killed)\n"
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
    if (program.empty()) {
      throw Error("missing PROGRAM; expected 'nsel exec --worker NAME -- PROGRAM [ARGS...]'");
    }
    // Validate everything before anything starts: a bad setting must stop every worker.
    parse_worker_name(options->worker, "--worker");
    ProfileSettings settings = ProfileSettings::from_environment(environment_variable);
    const LaunchSettings launch = LaunchSettings::from_environment(environment_variable);
    if (!options->capture.empty()) {
      settings.capture = parse_capture_mode(options->capture, "--capture");
    }
    std::vector<std::string> argv = program;
    argv.front() =
        resolve_program(program.front(), environment_variable("PATH").value_or(""), "PROGRAM");

    PlanRequest request{options->worker, CaptureMode::nvtx, options->output_dir, argv, "nsys"};
    request.identity = identify_this_process(*identity);
    request.report_tag = "nsel" + std::to_string(getpid());
    const WorkerPlan selection = plan_worker(settings, request);
    if (!selection.notice.empty()) std::fprintf(stderr, "%s\n", selection.notice.c_str());
    if (!selection.profile) replace_process(argv);

    const NsysCheck nsys = check_nsys(environment_variable("PATH").value_or(""));
    if (!nsys.usable) {
      if (launch.allow_unprofiled) {
        std::fprintf(stderr,
                     "nsel: warning: worker %s is selected but runs UNPROFILED (%s=1): %s; to "
                     "profile it, %s\n",
                     quote(options->worker).c_str(), std::string(kAllowUnprofiledVariable).c_str(),
                     nsys.problem.c_str(), nsys.fix.c_str());
        std::fflush(stderr);
        replace_process(argv);
      }
      throw Error("worker " + quote(options->worker) + " is selected but " + nsys.problem + "; " +
                      nsys.fix + "; or set " + std::string(kAllowUnprofiledVariable) +
                      "=1 to run it unprofiled",
                  127);
    }
    request.nsys = *nsys.path;
    request.node_capture = resolve_node_capture_mode(settings.capture);
    const WorkerPlan plan = plan_worker(settings, request);
    if (!options->output_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(options->output_dir, ec);
      if (ec) {
        throw Error("--output-dir=" + quote(options->output_dir) + ": cannot create it (" +
                    ec.message() + "); expected a writable folder");
      }
    }
    std::fprintf(stderr, "%s\n", plan.log_line().c_str());
    std::fflush(stderr);
    // Shielded from signals to our process group; a stop reaches the program, never nsys. The
    // manifest and the per-window names are the keeper's work, so they are done even when this
    // launcher is killed.
    std::optional<ManifestRecorder> manifest;
    SupervisionOptions supervision;
    supervision.stop_timeout = launch.stop_timeout;
    supervision.on_started = [&] { manifest.emplace(plan); };
    supervision.on_finished = [&](int code) {
      if (manifest) manifest->finish(code);
      if (!plan.repeated_reports) return;
      const auto named = name_window_reports(*plan.repeated_reports, plan.worker, plan.windows);
      for (const std::string& line : named.messages) std::fprintf(stderr, "%s\n", line.c_str());
      if (!manifest) return;
      std::vector<std::pair<StepWindow, std::filesystem::path>> written;
      for (const WindowReport& report : named.reports) {
        if (report.path) written.emplace_back(report.window, *report.path);
      }
      manifest->split_by_window(written);
    };
    return run_profiled(plan.command, plan.environment, supervision);
  };
}

}  // namespace nsel::cli
