#include "nsel/workflow/run_worker.hpp"

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <utility>

#include "nsel/core/capture.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/nsys_version.hpp"
#include "nsel/core/values.hpp"
#include "nsel/launch/manifest_recorder.hpp"
#include "nsel/launch/nsys_check.hpp"
#include "nsel/launch/supervisor.hpp"
#include "nsel/reports/window_reports.hpp"
#include "nsel/step/gpu_probe.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {

WorkerLaunch decide_worker(const WorkerRequest& request) {
  if (request.program.empty()) {
    throw Error("missing PROGRAM; expected 'nsel exec --worker NAME -- PROGRAM [ARGS...]'");
  }
  // Validate everything before anything starts: a bad setting must stop every worker.
  parse_worker_name(request.worker, "--worker");
  ProfileSettings settings = ProfileSettings::from_environment(request.environment);
  WorkerLaunch out;
  out.launch = LaunchSettings::from_environment(request.environment);
  if (!request.capture.empty()) {
    settings.capture = parse_capture_mode(request.capture, "--capture");
  }
  const std::string path = request.environment("PATH").value_or("");
  out.program = request.program;
  out.program.front() = resolve_program(request.program.front(), path, "PROGRAM");

  PlanRequest plan_request{request.worker, CaptureMode::nvtx, request.output_dir, out.program};
  plan_request.identity = identify_this_process(request.identity, request.environment);
  plan_request.report_tag = "nsel" + std::to_string(getpid());
  out.plan = select_worker(settings, plan_request);
  if (!out.plan.notice.empty()) out.notices.push_back(out.plan.notice);
  if (!out.plan.profile) return out;

  // Only a selected worker pays for the nsys check and the GPU probe.
  const NsysCheck nsys = check_nsys(path);
  if (!nsys.usable) {
    if (!out.launch.allow_unprofiled) {
      throw Error("worker " + quote(request.worker) + " is selected but " + nsys.problem + "; " +
                      nsys.fix + "; or set " + std::string(kAllowUnprofiledVariable) +
                      "=1 to run it unprofiled",
                  127);
    }
    out.notices.push_back("nsel: warning: worker " + quote(request.worker) +
                          " is selected but runs UNPROFILED (" +
                          std::string(kAllowUnprofiledVariable) + "=1): " + nsys.problem +
                          "; to profile it, " + nsys.fix);
    return out;
  }
  plan_request.nsys = *nsys.path;
  plan_request.nsys_version = parse_nsys_version(nsys.version);
  out.nsys_version = plan_request.nsys_version;
  // Probed once, where the capture depends on it (auto) or cannot work without it (cuda).
  std::optional<GpuVisibility> gpu;
  if (settings.capture == CaptureMode::automatic || settings.capture == CaptureMode::cuda) {
    const GpuProbe probe = probe_gpu_isolated();
    gpu = GpuVisibility{probe.usable, probe.detail, request.environment("CUDA_VISIBLE_DEVICES")};
    plan_request.node_capture = resolve_capture_mode(settings.capture, probe);
  } else {
    plan_request.node_capture = settings.capture;
  }
  complete_plan(out.plan, settings, plan_request);
  for (std::string& line : plan_guidance(out.plan, settings.capture, gpu)) {
    out.notices.push_back(std::move(line));
  }
  out.profiled = true;
  return out;
}

int run_worker(const WorkerRequest& request, const std::function<void(const std::string&)>& tell) {
  const WorkerLaunch launch = decide_worker(request);
  if (!launch.profiled) {
    for (const std::string& line : launch.notices) tell(line);
    replace_process(launch.program);
  }

  const WorkerPlan& plan = launch.plan;
  if (!request.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(request.output_dir, ec);
    if (ec) {
      throw Error("--output-dir=" + quote(request.output_dir) + ": cannot create it (" +
                  ec.message() + "); expected a writable folder");
    }
  }
  // Told once the job can start: a bad --output-dir stays a one-line error.
  for (const std::string& line : launch.notices) tell(line);
  tell(plan.log_line());
  // Shielded from signals to our process group; a stop reaches the program, never nsys. The
  // manifest and the per-window names are the keeper's work, so they are done even when this
  // launcher is killed.
  std::optional<ManifestRecorder> manifest;
  SupervisionOptions supervision;
  supervision.stop_timeout = launch.launch.stop_timeout;
  supervision.on_started = [&] { manifest.emplace(plan); };
  supervision.on_finished = [&](int code) {
    if (manifest) manifest->finish(code);
    if (!plan.repeated_reports) return;
    const auto named = name_window_reports(*plan.repeated_reports, plan.worker, plan.windows);
    for (const std::string& line : named.messages) tell(line);
    if (!manifest) return;
    std::vector<std::pair<StepWindow, std::filesystem::path>> written;
    for (const WindowReport& report : named.reports) {
      if (report.path) written.emplace_back(report.window, *report.path);
    }
    manifest->split_by_window(written);
  };
  std::vector<std::string> environment = plan.environment;
  // An unknown version gets every workaround, as the plan's options do.
  if (!launch.nsys_version || nsys_behaviour(*launch.nsys_version).stop_collection_before_signal) {
    environment.push_back(std::string(kStepStopHandoverVariable) + "=" +
                          std::to_string(kStopHandover.count()));
  }
  return run_profiled(plan.command, environment, supervision);
}

}  // namespace nsel
