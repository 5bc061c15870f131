// The plan for one worker: whether it is profiled, why, and the exact nsys command.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nsel/core/capture.hpp"
#include "nsel/core/nsys_options.hpp"
#include "nsel/core/nsys_version.hpp"
#include "nsel/core/rank_selection.hpp"
#include "nsel/core/settings.hpp"
#include "nsel/core/step_window.hpp"

namespace nsel {

struct PlanRequest {
  std::string worker;
  // The node's capture mode, already resolved (never automatic): see nsel::detect_capture_mode.
  CaptureMode node_capture = CaptureMode::nvtx;
  std::string output_dir;            // empty: nsys's working directory
  std::vector<std::string> program;  // PROGRAM ARGS..., may be empty for a preview
  std::string nsys = "nsys";
  // Its version, when known: the workarounds it needs come from nsys_behaviour; unknown (a
  // preview without nsys), all that some version needs.
  std::optional<NsysVersion> nsys_version{};
  // Who this process is, for NSEL_PROFILE_RANKS, NSEL_PROFILE_LOCAL_RANKS and NSEL_PROFILE_NODES.
  ProcessIdentity identity{};
  // Several windows only: a word that keeps this launch's reports apart from those of other
  // processes of the same worker writing to the same folder (`nsel exec` uses its process id).
  std::string report_tag{};
  // `nsel exec`: nsys writes a single report under a hidden name of this launch
  // ("." + the contract's name + "." + report_tag), and the keeper gives it the contract's name
  // (or the first free "-<k>" variant) once nsys has ended, so that two processes with the same
  // process id (two PID namespaces, or an old run in the folder) never lose a capture.
  bool claim_report_name = false;
};

// Several windows in one nsys session: nsys (capture-range-end=repeat) writes the k-th capture
// to <directory>/<stem><PID><tag>.<k>.nsys-rep; `nsel exec` renames each one, once nsys has
// exited, to the contract's name for its own window (see nsel/window_reports.hpp).
struct RepeatedReports {
  std::string directory;  // empty: the working directory
  std::string stem;       // "<worker>_<windows>_", as it appears on disk
  std::string tag;        // "" or ".<report_tag>"
};

struct WorkerPlan {
  std::string worker;
  bool profile = false;
  std::optional<std::string> pattern;  // the first matching pattern
  std::optional<StepWindow> window;    // the first window
  std::vector<StepWindow> windows;     // every window; one report each when profiled
  ProcessIdentity identity;
  std::optional<RepeatedReports> repeated_reports;  // set when reports must be renamed
  // With PlanRequest::claim_report_name: the -o value (nsys's syntax, %p for the process id) of
  // the name the report gets once nsys has ended; options' "o" is then nsys's hidden name.
  std::optional<std::string> report_output;
  CaptureMode capture = CaptureMode::none;  // what the step controller will do
  NsysOptions options;
  std::vector<std::string> command;  // nsys profile ... PROGRAM ARGS, or PROGRAM ARGS
  // Variables the profiled program must see (NAME=value), so its step controller agrees with
  // the capture options given to nsys.
  std::vector<std::string> environment;
  std::string reason;  // one sentence: why it is or is not profiled
  // A line for stderr when a matched worker is left out for a reason its user must hear (its
  // rank or node is unknown); empty otherwise.
  std::string notice;

  // "Nsight profiling enabled for worker '<worker>' (matched pattern '<pattern>')"
  std::string log_line() const;
};

WorkerPlan plan_worker(const ProfileSettings& settings, const PlanRequest& request);

// plan_worker in two halves, for a caller that must not look for nsys or probe the GPU before
// it knows the worker is profiled. select_worker decides (profile, pattern, windows, identity,
// reason, notice; command is request.program) without reading request.nsys or
// request.node_capture, and throws as plan_worker does for a report name nsys cannot finish.
// complete_plan then adds, to a selected plan, the nsys command, options and environment for
// request.nsys and request.node_capture.
WorkerPlan select_worker(const ProfileSettings& settings, const PlanRequest& request);
void complete_plan(WorkerPlan& plan, const ProfileSettings& settings, const PlanRequest& request);

// ---- guidance before a selected worker starts (nsel exec and nsel plan print it on stderr) ----

// The NeMo RL guide suggests windows of about this many steps.
inline constexpr long long kSuggestedWindowSteps = 10;

// How big the report of a plan is likely to be, from its traces and the steps of its windows.
// The figures are measured (see docs/selection.md, "Guidance"): a fixed part, what each step
// adds by trace kind, and the GPU part taken from a real A100 DDP capture; a real step with
// more kernels or ranges makes a bigger report.
struct ReportSizeEstimate {
  std::uintmax_t bytes = 0;
  std::string basis;  // one phrase: what the figure rests on
};
ReportSizeEstimate estimate_report_size(const WorkerPlan& plan);

// What the node's GPU probe found (step/gpu_probe.hpp), for a pure check.
struct GpuVisibility {
  bool usable = false;
  std::string detail;                               // "1 CUDA device", or why not
  std::optional<std::string> cuda_visible_devices;  // as the worker will see it
};

// One line each (for stderr, "nsel: warning: ..."), for a selected plan: a window longer than
// kSuggestedWindowSteps (with the size estimate), and a capture that needs a GPU the worker does
// not see: capture by the CUDA profiler API (no window would open), or CUDA traces when nsel
// chose the capture itself (`requested` automatic; a forced nvtx or none says the user knows).
// `gpu`: nullopt when not probed (then nothing is said about the GPU). Empty when all is well.
std::vector<std::string> plan_guidance(const WorkerPlan& plan, CaptureMode requested,
                                       const std::optional<GpuVisibility>& gpu);

}  // namespace nsel
