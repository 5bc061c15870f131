#include "nsel/core/plan.hpp"
#include "nsel/core/terminal_text.hpp"

#include <algorithm>

#include "core/output_name.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/values.hpp"

namespace nsel {
namespace {

bool is_absolute(std::string_view path) {
  return !path.empty() && path.front() == '/';
}

// Applies the node's capture mode to the options. A capture range the user set explicitly in
// NRL_NSYS_EXTRA_OPTIONS wins, and the step controller follows it instead.
CaptureMode apply_capture(NsysOptions& options, bool user_set_range, CaptureMode node_capture,
                          const std::optional<NsysVersion>& nsys_version) {
  const std::string nvtx_range(kNvtxCaptureRange);
  // What this nsys needs (docs/nsys-facts.md); an unknown version gets every workaround.
  const NsysBehaviour needs =
      nsys_version ? nsys_behaviour(*nsys_version) : nsys_behaviour(NsysVersion{2022, 4, 2, 1, ""});
  // With CPU context-switch tracing on, Nsight Systems 2022.4's agent can spin for good at the
  // end of a session: after an NVTX capture range in 7 of 30 runs here (the program then waits
  // forever; with it off, 0 of 32), and in whole-run sessions of short programs about every
  // second time (none of 7 with it off); 2023.4 hung in none of 20 of either with it on.
  // Context switches say little on a node without a GPU.
  const auto no_context_switches = [&] {
    if (needs.context_switch_hang && !options.has("cpuctxsw")) options.set("cpuctxsw", "none");
  };
  const auto use_nvtx = [&] {
    options.set("capture-range", "nvtx");
    if (!options.has("nvtx-capture")) options.set("nvtx-capture", nvtx_range);
    // nsys only matches registered NVTX strings unless told otherwise (2022.4 and 2023.4 alike:
    // without it 2023.4 wrote no report in 20 of 20 runs).
    if (needs.nvtx_register_only_off && !options.has("env-var")) {
      options.set("env-var", "NSYS_NVTX_PROFILER_REGISTER_ONLY=0");
    }
    no_context_switches();
  };
  if (user_set_range) {
    const std::string range = *options.get("capture-range");
    if (range == "cudaProfilerApi") return CaptureMode::cuda;
    if (range == "nvtx") {
      use_nvtx();
      return CaptureMode::nvtx;
    }
    return CaptureMode::none;
  }
  switch (node_capture) {
    case CaptureMode::nvtx:
      use_nvtx();
      return CaptureMode::nvtx;
    case CaptureMode::none:
      options.erase("capture-range");
      options.erase("capture-range-end");
      no_context_switches();
      return CaptureMode::none;
    case CaptureMode::cuda:
    case CaptureMode::automatic:
      return CaptureMode::cuda;
  }
  return CaptureMode::cuda;
}

// Several windows, one nsys session: one capture range per window, each its own report.
void plan_windows(WorkerPlan& plan, NsysOptions& options, const NsysOptions& user,
                  const PlanRequest& request) {
  const std::string windows = windows_text(plan.windows);
  if (plan.capture != CaptureMode::none && !user.has("capture-range-end")) {
    options.set("capture-range-end", "repeat:" + std::to_string(plan.windows.size()));
  }
  const bool repeats = plan.capture != CaptureMode::none &&
                       options.get("capture-range-end").value_or("").starts_with("repeat");
  if (user.has("o")) return;  // the user's own name: nsys's numbering stays as it is
  if (!repeats) {
    // One report for the whole process (no capture range, or one the user ends differently):
    // named for the span it covers, so the contract's name still parses.
    const StepWindow span{plan.windows.front().start, plan.windows.back().stop};
    options.set("o", escape_output_name(request.worker) + "_" + span.text() + "_%p");
    return;
  }
  RepeatedReports repeated;
  repeated.directory = request.output_dir;
  repeated.stem = request.worker + "_" + windows + "_";
  if (!request.report_tag.empty()) repeated.tag = "." + request.report_tag;
  options.set("o", escape_output_name(repeated.stem) + "%p" + escape_output_name(repeated.tag));
  plan.repeated_reports = repeated;
}

// Whether the process passes NSEL_PROFILE_NODES, NSEL_PROFILE_RANKS and
// NSEL_PROFILE_LOCAL_RANKS, and why (for a selected one, what to add to the reason).
struct Filtered {
  bool selected = true;
  bool unknown = false;  // left out because its node or rank could not be found
  std::string reason;
};

Filtered check_rank(const std::optional<RankList>& list, std::string_view variable,
                    const Identified<long long>& rank, std::string_view what, bool local) {
  Filtered out;
  if (!list) return out;
  const std::string setting = std::string(variable) + "=" + quote(list->text());
  if (!rank.value) {
    out.selected = false;
    out.unknown = true;
    out.reason = setting + " is set but the " + std::string(what) + " is unknown: " +
                 (rank.problem.empty()
                      ? "none of " + rank_variables_text(local) + " is set and none was given"
                      : rank.problem);
    return out;
  }
  const std::string described =
      std::string(what) + " " + std::to_string(*rank.value) + " (from " + rank.source + ")";
  out.selected = list->contains(*rank.value);
  out.reason =
      out.selected ? "; " + described + " is in " + setting : described + " is not in " + setting;
  return out;
}

Filtered apply_filters(const ProfileSettings& settings, const ProcessIdentity& identity) {
  Filtered all;
  if (settings.nodes) {
    const std::string variable(kNodesVariable);
    if (!identity.node.value) {
      return {false, true,
              variable + " is set but the node is unknown: no host name and none was given"};
    }
    const std::string node = *identity.node.value;
    const auto pattern = settings.nodes->first_match(node);
    const std::string described = "node " + quote(node) + " (from " + identity.node.source + ")";
    if (!pattern) return {false, false, described + " matches no pattern of " + variable};
    all.reason += "; " + described + " matches " + variable + " pattern " + quote(*pattern);
  }
  for (const Filtered& one :
       {check_rank(settings.ranks, kRanksVariable, identity.rank, "rank", false),
        check_rank(settings.local_ranks, kLocalRanksVariable, identity.local_rank, "local rank",
                   true)}) {
    if (!one.selected) return one;
    all.reason += one.reason;
  }
  return all;
}

// The options the user gave in NRL_NSYS_EXTRA_OPTIONS alone.
NsysOptions user_options(const ProfileSettings& settings) {
  NsysOptions user;
  if (settings.extra_options) user.merge_json(*settings.extra_options, kExtraOptionsVariable);
  return user;
}

}  // namespace

std::string WorkerPlan::log_line() const {
  // The contract's words; a control character in a name is shown escaped, never sent raw.
  return "Nsight profiling enabled for worker '" + terminal_text(worker) + "' (matched pattern '" +
         terminal_text(pattern.value_or("")) + "')";
}

WorkerPlan select_worker(const ProfileSettings& settings, const PlanRequest& request) {
  WorkerPlan plan;
  plan.worker = request.worker;
  plan.window = settings.window;
  plan.windows = settings.windows;
  plan.identity = request.identity;
  plan.command = request.program;
  if (!settings.enabled()) {
    plan.reason = "profiling is off: " + std::string(kWorkerPatternsVariable) + " and " +
                  std::string(kStepRangeVariable) + " are not set";
    return plan;
  }
  plan.pattern = settings.patterns->first_match(request.worker);
  if (!plan.pattern) {
    plan.reason = "no pattern of " + std::string(kWorkerPatternsVariable) + " matches";
    return plan;
  }
  const Filtered filtered = apply_filters(settings, request.identity);
  if (!filtered.selected) {
    plan.reason = filtered.reason;
    if (filtered.unknown) {
      plan.notice = "nsel: warning: worker " + quote(request.worker) + " matched pattern " +
                    quote(*plan.pattern) + " but is not profiled: " + filtered.reason;
    }
    return plan;
  }
  plan.profile = true;
  plan.reason = "matched pattern " + quote(*plan.pattern) + filtered.reason;

  NsysOptions options = NsysOptions::contract_defaults(request.worker, *settings.window);
  if (settings.extra_options) options.merge_json(*settings.extra_options, kExtraOptionsVariable);
  // Nsight Systems 2022.4 escapes '"' and '&' in report names with '&' and then fails inside the
  // profiled process when renaming its output (seen under Ray: the worker died), so such names
  // are refused before anything starts. The names complete_plan gives for several windows add
  // only the windows and the report tag to the worker's name.
  if (auto output = options.get("o"); output && output->find_first_of("\"&") != std::string::npos) {
    const bool from_user = user_options(settings).has("o");
    throw Error(bad_value(
        from_user ? kExtraOptionsVariable : std::string_view("worker name"),
        from_user ? *settings.extra_options : request.worker,
        "the report name would hold '\"' or '&', which Nsight Systems cannot "
        "finish a report under",
        from_user ? "an output name 'o' without '\"' and '&'" : "a name without '\"' and '&'"));
  }
  plan.options = options;
  return plan;
}

void complete_plan(WorkerPlan& plan, const ProfileSettings& settings, const PlanRequest& request) {
  if (!plan.profile) return;
  NsysOptions options = plan.options;
  const NsysOptions user = user_options(settings);
  plan.capture =
      apply_capture(options, user.has("capture-range"), request.node_capture, request.nsys_version);
  if (settings.windows.size() > 1) {
    plan_windows(plan, options, user, request);
  }
  // Hidden while nsys writes it: `nsel ls` never counts it beside the manifest that claims the
  // final name.
  if (const auto output = options.get("o");
      output && request.claim_report_name && !user.has("o") && !plan.repeated_reports) {
    plan.report_output = *output;
    const std::string tag = request.report_tag.empty() ? "nsel" : request.report_tag;
    options.set("o", "." + *output + "." + escape_output_name(tag));
  }
  std::string dir = request.output_dir;
  if (!dir.empty() && dir.back() != '/') dir += '/';
  if (auto output = options.get("o"); output && !dir.empty() && !is_absolute(*output)) {
    options.set("o", dir + *output);
  }
  if (plan.report_output && !dir.empty()) plan.report_output = dir + *plan.report_output;
  plan.options = options;

  plan.command = {request.nsys, "profile"};
  for (std::string& argument : options.to_argv()) plan.command.push_back(std::move(argument));
  for (const std::string& argument : request.program) plan.command.push_back(argument);
  plan.environment.push_back(std::string(kStepCaptureVariable) + "=" +
                             std::string(to_string(plan.capture)));
  plan.environment.push_back(std::string(kStepRangeVariable) + "=" +
                             windows_text(settings.windows));
}

WorkerPlan plan_worker(const ProfileSettings& settings, const PlanRequest& request) {
  WorkerPlan plan = select_worker(settings, request);
  complete_plan(plan, settings, request);
  return plan;
}

namespace {

// Report sizes written by Nsight Systems 2022.4 on this project's machines (docs/selection.md,
// "Guidance"): the part every report has, and what one step adds by trace kind.
constexpr std::uintmax_t kReportFixedBytes = 139 * 1000;  // a 1-step window, t=cuda,nvtx, no GPU
// The example worker: one NVTX range a step. OS runtime calls and CPU sampling grow with time
// and with what a step does, not with the step count, so they are left out (sampling added
// about 14 KB a second of one busy thread here).
constexpr std::uintmax_t kNvtxStepBytes = 60;
// nersc-sc22-ddp/4gpu_baseline.nsys-rep (A100, one rank of a 4-rank DDP UNet, about 380 kernels a
// step, -t cuda,cublas,nvtx with CPU sampling, nsys 2022.4.2):
// 3,273,656 bytes over 59 steps.
constexpr std::uintmax_t kCudaStepBytes = 55 * 1000;

long long window_steps(const WorkerPlan& plan) {
  long long steps = 0;
  for (const StepWindow& w : plan.windows) steps += w.stop - w.start;
  return steps;
}

bool traces(const WorkerPlan& plan, std::string_view kind) {
  const std::string t = plan.options.get("t").value_or("");
  std::size_t begin = 0;
  while (begin <= t.size()) {
    const std::size_t end = std::min(t.find(',', begin), t.size());
    if (std::string_view(t).substr(begin, end - begin) == kind) return true;
    begin = end + 1;
  }
  return false;
}

}  // namespace

ReportSizeEstimate estimate_report_size(const WorkerPlan& plan) {
  const long long steps = window_steps(plan);
  std::uintmax_t per_step = kNvtxStepBytes;
  std::string basis = size_text(kReportFixedBytes) + " + " + std::to_string(steps) + " steps x ";
  std::string kinds = "NVTX";
  if (traces(plan, "cuda")) {
    per_step += kCudaStepBytes;
    kinds += " and CUDA as on one A100 DDP rank";
  }
  ReportSizeEstimate estimate;
  estimate.bytes = kReportFixedBytes * plan.windows.size() +
                   per_step * static_cast<std::uintmax_t>(std::max(steps, 0LL));
  estimate.basis = basis + size_text(per_step) + " of " + kinds;
  return estimate;
}

std::vector<std::string> plan_guidance(const WorkerPlan& plan, CaptureMode requested,
                                       const std::optional<GpuVisibility>& gpu) {
  std::vector<std::string> lines;
  if (!plan.profile) return lines;
  const std::string who = "nsel: warning: worker " + quote(plan.worker) + ": ";
  const long long steps = window_steps(plan);
  if (steps > kSuggestedWindowSteps) {
    const ReportSizeEstimate size = estimate_report_size(plan);
    lines.push_back(who + "window " + windows_text(plan.windows) + " is " + std::to_string(steps) +
                    " steps, the NeMo RL guide suggests about " +
                    std::to_string(kSuggestedWindowSteps) + "; expect a report of about " +
                    size_text(size.bytes) + " (" + size.basis +
                    ") that takes longer to write and to open; shorten " +
                    std::string(kStepRangeVariable) + " unless you need every step");
  }
  if (gpu && !gpu->usable) {
    const bool cuda_capture = plan.capture == CaptureMode::cuda;
    const bool cuda_traces = requested == CaptureMode::automatic && traces(plan, "cuda");
    if (cuda_capture || cuda_traces) {
      std::string hidden;
      if (gpu->cuda_visible_devices) {
        hidden = ", CUDA_VISIBLE_DEVICES=" + quote(*gpu->cuda_visible_devices);
      }
      const std::string what =
          cuda_capture
              ? "its capture uses the CUDA profiler API, so its window would never open "
                "and it would leave no report"
              : "its report would hold no CUDA data (t=" + plan.options.get("t").value_or("") + ")";
      lines.push_back(who + "sees no usable GPU (" + gpu->detail + hidden + ") but " + what +
                      "; fix: run it where a GPU is visible (check CUDA_VISIBLE_DEVICES and the "
                      "driver), or, if it uses no GPU, set " +
                      std::string(kCaptureVariable) + "=nvtx" +
                      (cuda_capture ? "" : " and drop cuda from t in NRL_NSYS_EXTRA_OPTIONS"));
    }
  }
  return lines;
}

}  // namespace nsel
