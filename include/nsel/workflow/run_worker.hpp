// One worker process, as `nsel exec` runs it: validated, planned once, then either this process
// replaced by the program (not selected, or allowed to run unprofiled) or nsys supervised.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nsel/core/launch_settings.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/settings.hpp"
#include "nsel/launch/nsys_check.hpp"
#include "nsel/step/gpu_probe.hpp"
#include "nsel/workflow/identity.hpp"

namespace nsel {

// How the GPU is asked, where the capture depends on it (auto) or cannot work without it (cuda).
enum class GpuProbing {
  isolated,    // in a forked child: nsel exec, nsel plan
  in_process,  // in this process, for a multi-threaded caller that must not fork (a Ray driver)
  // Not at all, an automatic capture planned as an NVTX range: a check before the worker starts
  // (nsel's Ray plugin in Ray's agent), whose own `nsel exec` probes the node.
  skipped,
};

// Ray's driver plans an actor elsewhere: the nsys that profiles it is its node's, whose version
// is not known here, so the plan has every generation's workarounds (the options are still asked
// of this node's nsys, the usual image of the others).
enum class ActorPlanning {
  none,
  nsight_field,  // for Ray's own nsight field: decided here
  // For nsel's plugin: a rank, local-rank or node filter whose value the driver was not given is
  // left to `nsel exec` on the actor's node, instead of leaving the actor out here.
  plugin,
};

struct WorkerRequest {
  std::string worker;
  std::string output_dir;  // created when profiled; empty: the working directory
  std::string capture;     // "auto", "cuda", "nvtx" or "none"; empty: NSEL_CAPTURE or auto
  GivenIdentity identity;
  std::vector<std::string> program;  // PROGRAM ARGS...; PROGRAM is looked up on PATH
  EnvLookup environment;             // the variables nsel reads, PATH among them
  // Who is planned when the caller decided it (the Python binding, which names its own
  // arguments); empty: this process, from `identity`, the environment and the host name.
  std::optional<ProcessIdentity> decided_identity = std::nullopt;
  // A Ray driver planning an actor that runs on another node, under that node's nsys.
  ActorPlanning actor = ActorPlanning::none;
  GpuProbing gpu_probing = GpuProbing::isolated;
  // true: the options are also tried for real (require_known_options' trial run), so that a
  // value nsys refuses fails here rather than when the worker starts: for nsel's Ray plugin.
  bool try_options = false;
  // nsel plan --ranks: planned as this rank in place of the process's own.
  std::optional<long long> listed_rank = std::nullopt;
};

// What to do with the worker.
struct WorkerLaunch {
  // Lines for stderr, in order, before anything starts: why a matched worker is left out, or
  // that a selected one runs unprofiled.
  std::vector<std::string> notices;
  bool profiled = false;
  std::vector<std::string> program;  // PROGRAM (absolute) ARGS, to run bare when not profiled
  WorkerPlan plan;                   // complete (with its nsys command) when profiled
  LaunchSettings launch;
  std::optional<NsysVersion> nsys_version;  // the planned nsys's, when profiled and known
  // What the GPU probe said, when the capture asked it (nsel plan shows it).
  std::optional<GpuProbe> probe;
};

// What planning several workers in one process asks once: this node's nsys, its GPU, and nsys
// about each distinct option set (nsel plan of many workers and ranks).
struct PlanningMemo {
  std::optional<NsysCheck> nsys;
  std::optional<GpuProbe> probe;
  std::set<std::vector<std::string>> options_asked;
};

// How long a program stopped by a signal inside its NVTX capture range runs on after ending it,
// where nsys needs that (kStepStopHandoverVariable): 0.3 s lost every NVTX event in 1 of 5 runs
// with 2023.4, 1 s in none of 5.
inline constexpr std::chrono::milliseconds kStopHandover{1500};

// nsel exec's exit code when the program exited 0 but its capture was lost for a cause nsel saw
// (the manifest's state: disk_full, not_writable, name_taken, stop_timeout, qdstrm).
inline constexpr int kCaptureLostExitCode = 1;

// Validates the request and the settings before anything starts (nsel::Error, exit code 2), and
// plans once: a selected worker needs a usable nsys (nsel::Error, exit code 127, unless
// NSEL_ALLOW_UNPROFILED=1 lets it run bare), option names that nsys knows (exit code 2) and the
// node's capture mode; an unselected one needs neither. Starts nothing: nsel's Ray plugin calls
// it (GpuProbing::skipped) in Ray's runtime-env agent before the worker starts, so that a setting
// nsys refuses or a node without nsys fails the actor's runtime env at once, with the same line,
// where a worker that dies at its start is retried by Ray for minutes.
WorkerLaunch decide_worker(const WorkerRequest& request);

// The same decision for nsel plan, which starts nothing and claims no report name: the program is
// optional and shown as given (it runs where the plan is used, on that node's PATH), and a
// selected worker on a node without a usable nsys is planned with the nsys found, or plain
// "nsys", with every workaround (exec would stop there). What `memo` holds is not asked again.
// nsel plan, Python's nsel.plan() and the Ray driver's helpers all plan through it.
WorkerLaunch preview_worker(const WorkerRequest& request, PlanningMemo& memo);

// decide_worker, its notices told, then the program in place of this process when it is not
// profiled; otherwise the output folder made, the plan's log line told, and nsys supervised
// (the manifest and the per-window report names written by the keeper, whose lines are told
// too). Returns the program's exit code. `tell` gets one line at a time, for stderr; a line told
// before the process is replaced must be written out at once. Forks: call it single-threaded.
int run_worker(const WorkerRequest& request, const std::function<void(const std::string&)>& tell);

}  // namespace nsel
