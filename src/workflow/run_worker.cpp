#include "nsel/workflow/run_worker.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <utility>

#include "nsel/core/capture.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/core/nsys_version.hpp"
#include "nsel/core/values.hpp"
#include "nsel/launch/as_started.hpp"
#include "nsel/launch/manifest_recorder.hpp"
#include "nsel/launch/nsys_check.hpp"
#include "nsel/launch/supervisor.hpp"
#include "nsel/reports/window_reports.hpp"
#include "nsel/step/gpu_probe.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {

namespace {

std::string random_hex() {
  std::random_device device;
  char text[16];
  std::snprintf(text, sizeof text, "%08x", static_cast<unsigned>(device()));
  return text;
}

// The checks that can be made before the program starts, each a one-line error (exit code 2):
// the report's folder exists (or is made), is a folder, takes a file, and takes names as long as
// the longest nsel and nsys will give there.
void check_report_folder(const WorkerRequest& request, const WorkerPlan& plan) {
  namespace fs = std::filesystem;
  // nsel names the report itself unless NRL_NSYS_EXTRA_OPTIONS gives an output name 'o'.
  const std::optional<std::string> extra_options =
      request.environment(std::string(kExtraOptionsVariable));
  const bool user_output = !plan.report_output && !plan.repeated_reports && extra_options;
  std::error_code ec;
  if (!request.output_dir.empty()) {
    if (fs::exists(request.output_dir, ec) && !fs::is_directory(request.output_dir, ec)) {
      throw Error(bad_value("--output-dir", request.output_dir, "it exists and is not a folder",
                            "a folder for the reports"));
    }
    fs::create_directories(request.output_dir, ec);
    if (ec) {
      throw Error(bad_value("--output-dir", request.output_dir,
                            "cannot create it (" + ec.message() + ")", "a writable folder"));
    }
  }
  const fs::path working_dir = fs::current_path(ec);
  const fs::path folder =
      expand_report_path(plan.options.get("o").value_or(plan.worker + "_%p"), 1, working_dir)
          .parent_path();
  // Named as the user gave it: the flag, the variable, or the working directory.
  const auto source = [&]() -> std::pair<std::string, std::string> {
    if (user_output) return {std::string(kExtraOptionsVariable), *extra_options};
    if (!request.output_dir.empty()) return {"--output-dir", request.output_dir};
    return {"--output-dir (not given: the working directory)", working_dir.string()};
  }();
  if (!fs::is_directory(folder, ec)) {
    if (user_output) {
      // nsys creates no folder: it would write the report under a name of its own in /tmp.
      throw Error(bad_value(source.first, source.second,
                            "its output name 'o' puts the report in " + quote(folder.string()) +
                                ", which is not an existing folder",
                            "an output name 'o' in an existing folder (nsys creates none)"));
    }
    throw Error(bad_value(source.first, source.second, "no such folder", "a writable folder"));
  }
  if (const int refusal = new_file_refusal(folder); refusal != 0) {
    const std::string problem = std::strerror(refusal);
    throw Error(bad_value(source.first, source.second,
                          "the report's folder " + quote(folder.string()) +
                              " does not take a new file (" + problem + ")",
                          "a folder nsel and nsys can write to"));
  }
  // A user's own name that does not change with the process id: taken now, nsys would refuse it
  // and write the report elsewhere.
  if (user_output) {
    const std::string output = plan.options.get("o").value_or("");
    const fs::path one = expand_report_path(output, 1, working_dir);
    if (one == expand_report_path(output, 2, working_dir)) {
      for (const fs::path& file : files_claiming_report_name(one)) {
        if (anything_at(file)) {
          throw Error(bad_value(kExtraOptionsVariable, *extra_options,
                                "its output name 'o' gives " + quote(one.string()) + ", and " +
                                    quote(file.string()) + " exists",
                                "an output name no file has yet, e.g. with %p (the process id)"));
        }
      }
    }
  }
  const long name_max = ::pathconf(folder.c_str(), _PC_NAME_MAX);
  const std::string longest = longest_file_name(plan);
  if (name_max > 0 && longest.size() > static_cast<std::size_t>(name_max)) {
    const std::string problem = "a file name in the report's folder would be " +
                                std::to_string(longest.size()) + " characters (" + quote(longest) +
                                "), more than the " + std::to_string(name_max) +
                                " its file system allows";
    if (user_output) {
      throw Error(
          bad_value(kExtraOptionsVariable, *extra_options, problem, "a shorter output name 'o'"));
    }
    const std::size_t excess = longest.size() - static_cast<std::size_t>(name_max);
    throw Error(bad_value("--worker", request.worker, problem,
                          excess < request.worker.size()
                              ? "a worker name of at most " +
                                    std::to_string(request.worker.size() - excess) + " characters"
                              : std::string("a shorter worker name")));
  }
}

}  // namespace

namespace {

// Settings as the environment and --capture give them.
ProfileSettings settings_of(const WorkerRequest& request) {
  ProfileSettings settings = ProfileSettings::from_environment(request.environment);
  if (!request.capture.empty()) {
    settings.capture = parse_capture_mode(request.capture, "--capture");
  }
  if (request.actor == ActorPlanning::plugin && request.decided_identity) {
    const ProcessIdentity& actor = *request.decided_identity;
    if (!actor.rank.value) settings.ranks.reset();
    if (!actor.local_rank.value) settings.local_ranks.reset();
    if (!actor.node.value) settings.nodes.reset();
  }
  return settings;
}

// The identity the worker is planned with: the caller's decision, this process's, or the rank of
// nsel plan --ranks.
ProcessIdentity identity_of(const WorkerRequest& request) {
  ProcessIdentity identity = request.decided_identity
                                 ? *request.decided_identity
                                 : identify_this_process(request.identity, request.environment);
  if (request.listed_rank) identity.rank = {*request.listed_rank, "--ranks", ""};
  return identity;
}

// A selected worker's plan completed with its nsys and the node's capture, and the guidance for
// it. The GPU is probed once (kept in `memo`), where the capture depends on it (auto) or cannot
// work without it (cuda).
// `nsys_version`: the text nsys gave, asked about the options unless empty.
void complete_selected(WorkerLaunch& out, const ProfileSettings& settings,
                       PlanRequest& plan_request, const std::string& nsys_version,
                       const WorkerRequest& request, PlanningMemo& memo) {
  std::optional<GpuVisibility> gpu;
  if (request.gpu_probing == GpuProbing::skipped) {
    plan_request.node_capture =
        settings.capture == CaptureMode::automatic ? CaptureMode::nvtx : settings.capture;
  } else if (settings.capture == CaptureMode::automatic || settings.capture == CaptureMode::cuda) {
    if (!memo.probe) {
      memo.probe = request.gpu_probing == GpuProbing::in_process ? probe_gpu_in_process()
                                                                 : probe_gpu_isolated();
    }
    out.probe = memo.probe;
    gpu = GpuVisibility{memo.probe->usable, memo.probe->detail,
                        request.environment("CUDA_VISIBLE_DEVICES")};
    plan_request.node_capture = resolve_capture_mode(settings.capture, *memo.probe);
  } else {
    plan_request.node_capture = settings.capture;
  }
  complete_plan(out.plan, settings, plan_request);
  // nsys refuses an unknown option name only once it runs; asked now, it is a one-line error
  // before the program starts (exit code 2), and under Ray before the worker's retries.
  if (!nsys_version.empty() && memo.options_asked.insert(out.plan.options.to_argv()).second) {
    require_known_options(out.plan.options, plan_request.nsys, nsys_version,
                          request.environment(std::string(kExtraOptionsVariable)),
                          request.try_options);
  }
  for (std::string& line : plan_guidance(out.plan, settings.capture, gpu)) {
    out.notices.push_back(std::move(line));
  }
}

}  // namespace

WorkerLaunch decide_worker(const WorkerRequest& request) {
  if (request.program.empty()) {
    throw Error("missing PROGRAM; expected 'nsel exec --worker NAME -- PROGRAM [ARGS...]'");
  }
  // Validate everything before anything starts: a bad setting must stop every worker.
  parse_worker_name(request.worker, "--worker");
  const ProfileSettings settings = settings_of(request);
  WorkerLaunch out;
  out.launch = LaunchSettings::from_environment(request.environment);
  const std::string path = request.environment("PATH").value_or("");
  out.program = request.program;
  out.program.front() = resolve_program(request.program.front(), path, "PROGRAM");

  PlanRequest plan_request{request.worker, CaptureMode::nvtx, request.output_dir, out.program};
  plan_request.identity = identity_of(request);
  // Unique to this launch even where process ids repeat (every container's PID namespace).
  plan_request.report_tag = "nsel" + std::to_string(getpid()) + "-" + random_hex();
  plan_request.claim_report_name = true;
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
  PlanningMemo memo;
  complete_selected(out, settings, plan_request, nsys.version, request, memo);
  out.profiled = true;
  return out;
}

WorkerLaunch preview_worker(const WorkerRequest& request, PlanningMemo& memo) {
  parse_worker_name(request.worker, "worker");
  const ProfileSettings settings = settings_of(request);
  WorkerLaunch out;
  out.program = request.program;
  PlanRequest plan_request{request.worker, CaptureMode::nvtx, request.output_dir, out.program};
  plan_request.identity = identity_of(request);
  out.plan = select_worker(settings, plan_request);
  if (!out.plan.notice.empty()) out.notices.push_back(out.plan.notice);
  if (!out.plan.profile) return out;

  // The nsys nsel exec would use, found and asked as exec does; without one, the workarounds
  // every generation needs (shown as plain "nsys").
  if (!memo.nsys) memo.nsys = check_nsys(request.environment("PATH").value_or(""));
  plan_request.nsys = memo.nsys->path.value_or("nsys");
  if (!memo.nsys->version.empty() && request.actor == ActorPlanning::none)
    plan_request.nsys_version = parse_nsys_version(memo.nsys->version);
  out.nsys_version = plan_request.nsys_version;
  complete_selected(out, settings, plan_request, memo.nsys->version, request, memo);
  out.profiled = true;
  return out;
}

namespace {

// A capture lost for a cause nsel saw is never a success: a program that exited 0 gets
// kCaptureLostExitCode, and the cause is told (the manifest says it too).
int exit_code_after(int code, std::string_view state, const Manifest& manifest,
                    const std::filesystem::path& manifest_path,
                    const std::function<void(const std::string&)>& tell) {
  const bool lost = state == kManifestQdstrm || state == kManifestDiskFull ||
                    state == kManifestNotWritable || state == kManifestNameTaken ||
                    state == kManifestStopTimeout || state == kManifestNsysFailed;
  if (!lost) return code;
  tell("nsel: error: worker " + quote(manifest.worker) + ": no complete report (" +
       std::string(state) + "): " + manifest.reason + " (manifest " +
       quote(manifest_path.string()) + ")");
  return code == 0 ? kCaptureLostExitCode : code;
}

// nsys runs nsel's own step in place of the program: it gives the program what it would inherit
// without nsys (nsys's umask 0000 and ignored signals) and becomes the program in the same
// process. Where the step is not beside nsel, the program runs as nsys starts it, and that is said.
std::vector<std::string> as_started(const std::vector<std::string>& command,
                                    const std::vector<std::string>& program,
                                    const InheritedState& inherited,
                                    const std::function<void(const std::string&)>& tell) {
  const std::string step =
      (std::filesystem::path(self_executable()).parent_path() / kAsStartedProgram).string();
  if (::access(step.c_str(), X_OK) != 0) {
    tell("nsel: warning: " + quote(step) + " is missing (" + std::strerror(errno) +
         "); the program runs with nsys's umask 0000 and ignored signals; reinstall nsel");
    return command;
  }
  std::vector<std::string> stepped(command.begin(),
                                   command.end() - static_cast<std::ptrdiff_t>(program.size()));
  for (std::string& word : as_started_command(step, inherited, program)) {
    stepped.push_back(std::move(word));
  }
  return stepped;
}

}  // namespace

int run_worker(const WorkerRequest& request, const std::function<void(const std::string&)>& tell) {
  // Taken before anything here changes it: what the program gets back under nsys.
  const InheritedState inherited = inherited_state_now();
  const WorkerLaunch launch = decide_worker(request);
  if (!launch.profiled) {
    for (const std::string& line : launch.notices) tell(line);
    replace_process(launch.program);
  }

  const WorkerPlan& plan = launch.plan;
  check_report_folder(request, plan);
  // See NsysNamespaceClaim: looked at here, before anything is said or started, and claimed by
  // the keeper under its start turn, for the whole run.
  const bool one_namespace_at_a_time =
      launch.nsys_version && nsys_behaviour(*launch.nsys_version).one_pid_namespace_at_a_time;
  const auto namespace_refusal = [&](const std::string& other) {
    return "worker " + quote(plan.worker) + ": Nsight Systems " + launch.nsys_version->text +
           " runs the sessions of one PID namespace (container) at a time on a machine, and an "
           "nsel exec in " +
           other +
           " runs one now: this one would fail before its program starts (\"Agent launcher "
           "failed\"); use Nsight Systems 2023.4 or later (NSEL_NSYS, PATH), or start it when "
           "that run has ended";
  };
  if (one_namespace_at_a_time) {
    if (const std::string other = nsys_pid_namespace_in_use_elsewhere(); !other.empty()) {
      throw Error(namespace_refusal(other), 1);
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
  // The program's step control tells here whether it opened its capture: a report nsys then
  // fails to write is its failure, never a window not reached. Without a temporary folder the
  // manifest says only what the files show.
  const std::optional<std::filesystem::path> step_record =
      create_private_temporary_file("nsel-step-record");
  const auto remove_step_record = [&] {
    std::error_code ignored;
    if (step_record) std::filesystem::remove(*step_record, ignored);
  };
  NsysNamespaceClaim namespace_claim;  // in the keeper's memory: held as long as it runs
  if (one_namespace_at_a_time) {
    supervision.under_start_turn = [&]() -> std::string {
      namespace_claim = claim_nsys_pid_namespace();
      return namespace_claim.conflict.empty() ? "" : namespace_refusal(namespace_claim.conflict);
    };
  }
  supervision.on_started = [&](pid_t nsys) {
    manifest.emplace(plan, nsys);
    if (step_record) {
      manifest->read_step_record(*step_record,
                                 launch.nsys_version ? launch.nsys_version->text : "");
    }
  };
  // Only the step tells for sure that the program began (a short one may come and go between
  // two looks for it): without the step, or without a record, nsys is never started again.
  bool step_tells_begin = false;
  supervision.program_never_began = [&] {
    if (!step_tells_begin || !step_record || !manifest) return false;
    const std::optional<std::string> told = read_small_file(*step_record);
    if (!told || told->find(std::string(kStepRecordBegan) + "\n") != std::string::npos) {
      return false;
    }
    if (!manifest->abandon_unstarted()) return false;
    manifest.reset();
    return true;
  };
  supervision.on_finished = [&](const SupervisionEnd& end) {
    if (!manifest) return end.exit_code;
    const std::string state = manifest->finish(end.exit_code, end.stop_timed_out);
    if (plan.repeated_reports) {
      const auto named = name_window_reports(*plan.repeated_reports, plan.worker, plan.windows);
      for (const std::string& line : named.messages) tell(line);
      std::vector<std::pair<StepWindow, std::filesystem::path>> written;
      for (const WindowReport& report : named.reports) {
        if (report.path) written.emplace_back(report.window, *report.path);
      }
      manifest->split_by_window(written);
    }
    return exit_code_after(end.exit_code, state, manifest->manifest(), manifest->path(), tell);
  };
  std::vector<std::string> environment = plan.environment;
  // An unknown version gets every workaround, as the plan's options do.
  if (!launch.nsys_version || nsys_behaviour(*launch.nsys_version).stop_collection_before_signal) {
    environment.push_back(std::string(kStepStopHandoverVariable) + "=" +
                          std::to_string(kStopHandover.count()));
  }
  if (step_record) {
    environment.push_back(std::string(kStepRecordVariable) + "=" + step_record->string());
  }
  try {
    const std::vector<std::string> command =
        as_started(plan.command, launch.program, inherited, tell);
    step_tells_begin = command.size() > plan.command.size();
    const int code = run_profiled(command, environment, supervision);
    remove_step_record();
    return code;
  } catch (...) {
    remove_step_record();
    throw;
  }
}

}  // namespace nsel
