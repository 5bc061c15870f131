#include "nsel/plan.hpp"

#include "nsel/error.hpp"

namespace nsel {
namespace {

bool is_absolute(std::string_view path) {
  return !path.empty() && path.front() == '/';
}

// Applies the node's capture mode to the options. A capture range the user set explicitly in
// NRL_NSYS_EXTRA_OPTIONS wins, and the step controller follows it instead.
CaptureMode apply_capture(NsysOptions& options, bool user_set_range, CaptureMode node_capture) {
  const std::string nvtx_range(kNvtxCaptureRange);
  const auto use_nvtx = [&] {
    options.set("capture-range", "nvtx");
    if (!options.has("nvtx-capture")) options.set("nvtx-capture", nvtx_range);
    // nsys only matches registered NVTX strings unless told otherwise.
    if (!options.has("env-var")) options.set("env-var", "NSYS_NVTX_PROFILER_REGISTER_ONLY=0");
    // With CPU context-switch tracing on, Nsight Systems 2022.4's agent spun for good after an
    // NVTX capture range in 7 of 30 runs here (the program then waits forever); with it off,
    // 0 of 32. Context switches say little on a node without a GPU.
    if (!options.has("cpuctxsw")) options.set("cpuctxsw", "none");
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
      return CaptureMode::none;
    case CaptureMode::cuda:
    case CaptureMode::automatic:
      return CaptureMode::cuda;
  }
  return CaptureMode::cuda;
}

}  // namespace

std::string WorkerPlan::log_line() const {
  return "Nsight profiling enabled for worker '" + worker + "' (matched pattern '" +
         pattern.value_or("") + "')";
}

WorkerPlan plan_worker(const ProfileSettings& settings, const PlanRequest& request) {
  WorkerPlan plan;
  plan.worker = request.worker;
  plan.window = settings.window;
  if (!settings.enabled()) {
    plan.reason = "profiling is off: " + std::string(kWorkerPatternsVariable) + " and " +
                  std::string(kStepRangeVariable) + " are not set";
    plan.command = request.program;
    return plan;
  }
  plan.pattern = settings.patterns->first_match(request.worker);
  if (!plan.pattern) {
    plan.reason = "no pattern of " + std::string(kWorkerPatternsVariable) + " matches";
    plan.command = request.program;
    return plan;
  }
  plan.profile = true;
  plan.reason = "matched pattern " + quote(*plan.pattern);

  NsysOptions options = NsysOptions::contract_defaults(request.worker, *settings.window);
  if (settings.extra_options) options.merge_json(*settings.extra_options, kExtraOptionsVariable);
  bool user_set_range = false;
  if (settings.extra_options) {
    NsysOptions user;
    user.merge_json(*settings.extra_options, kExtraOptionsVariable);
    user_set_range = user.has("capture-range");
  }
  // Nsight Systems 2022.4 escapes '"' and '&' in report names with '&' and then fails inside the
  // profiled process when renaming its output (seen under Ray: the worker died), so such names
  // are refused before anything starts.
  if (auto output = options.get("o"); output && output->find_first_of("\"&") != std::string::npos) {
    NsysOptions user;
    if (settings.extra_options) user.merge_json(*settings.extra_options, kExtraOptionsVariable);
    const bool from_user = user.has("o");
    throw Error(bad_value(
        from_user ? kExtraOptionsVariable : std::string_view("worker name"),
        from_user ? *settings.extra_options : request.worker,
        "the report name would hold '\"' or '&', which Nsight Systems cannot "
        "finish a report under",
        from_user ? "an output name 'o' without '\"' and '&'" : "a name without '\"' and '&'"));
  }
  if (auto output = options.get("o");
      output && !request.output_dir.empty() && !is_absolute(*output)) {
    std::string dir = request.output_dir;
    if (dir.back() != '/') dir += '/';
    options.set("o", dir + *output);
  }
  plan.capture = apply_capture(options, user_set_range, request.node_capture);
  plan.options = options;

  plan.command = {request.nsys, "profile"};
  for (std::string& argument : options.to_argv()) plan.command.push_back(std::move(argument));
  for (const std::string& argument : request.program) plan.command.push_back(argument);
  plan.environment.push_back(std::string(kStepCaptureVariable) + "=" +
                             std::string(to_string(plan.capture)));
  plan.environment.push_back(std::string(kStepRangeVariable) + "=" + settings.window->text());
  return plan;
}

}  // namespace nsel
