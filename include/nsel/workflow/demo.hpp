// `nsel demo`: a small GRPO-shaped local job (policy workers and one generation worker, each the
// example worker launched through `nsel exec`, exactly as users launch theirs) with its reports
// in a Ray-style session, listed with the steps they hold. The policy ranks train: forward,
// backward, an all-reduce-like wait for the slowest rank, optimizer; the last rank is slower.
// Then the reports are summarised as `nsel report` does (step table, stragglers, HTML page) and
// judged as `nsel check` does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nsel/analyze/report_set.hpp"
#include "nsel/analyze/step_ranges.hpp"
#include "nsel/workflow/check_run.hpp"

namespace nsel {

struct DemoRequest {
  long long steps = 5;
  long long work_ms = 150;
  std::filesystem::path root;   // for the sessions; empty: <temp>/nsel-demo
  int ranks = 0;                // policy ranks; 0: the default layout (two, no rank filter)
  long long slow_percent = 50;  // how much slower the last policy rank computes
  // --ray: the same job as Ray actors on a local Ray cluster, run by nsel's Python package
  // (python -m nsel._demo_ray) with this interpreter's Ray; each actor's runtime env comes from
  // nsel.plugin_runtime_env. Empty python: NSEL_PYTHON (the package's `nsel` sets it to its
  // interpreter), else python3 on PATH.
  bool ray = false;
  std::string python{};
  // -v: the workers' and nsys's own output (kept in the session's log) is also told once they
  // end; without it only a failed worker's last lines are.
  bool verbose = false;
};

struct DemoWorker {
  std::string name;
  int rank = 0;
  bool profiled = false;  // as `nsel exec` decides it
  std::string reason{};
  long long pid = 0;  // --ray: the actor's process (0 otherwise)
};

struct DemoReport {
  std::filesystem::path path;
  std::uintmax_t bytes = 0;
  std::vector<StepRange> steps;
  std::string problem;  // empty, or why its steps could not be read
};

struct DemoRun {
  std::string ray_version;  // --ray: the Ray that ran the actors (empty otherwise)
  std::filesystem::path session;
  std::filesystem::path nsight_dir;
  std::filesystem::path worker_log;  // the workers' and nsys's own output (not with --ray)
  std::vector<DemoWorker> workers;
  int failed_workers = 0;
  std::vector<DemoReport> reports;               // sorted by path
  std::vector<std::filesystem::path> leftovers;  // unfinished .qdstrm captures
  bool shows_ranks = false;          // --ranks or a rank or node filter: which ranks ran under nsys
  int slow_rank = -1;                // the policy rank made slower
  std::optional<ReportSet> summary;  // nsel report's summary of the reports, when any
  std::string summary_problem;       // why there is none, when reports were expected
  // In data-parallel training every rank waits in the all-reduce for the slowest, so step times
  // come out alike; the straggler is summary->comparison.straggler, nsel report's one rule: the
  // rank whose compute (its step less its communication ranges, the demo's "all-reduce") is above
  // the median of the other ranks' the most often.
  std::filesystem::path html;  // the HTML page, once the render room wrote it (write_demo_page)
  RunCheck verdict;            // nsel check of the session, expecting the profiled workers
  int exit_code() const;       // 0: every worker ran and the verdict is ok
};

// Sets NRL_NSYS_WORKER_PATTERNS and NRL_NSYS_PROFILE_STEP_RANGE ('*policy*', '2:4') when neither
// is set, and with `ranks` NSEL_PROFILE_RANKS=0 when no rank or node filter is set, for this
// process and its workers; validates the settings before anything exists (nsel::Error), then
// creates the session, runs the workers together and lists what they left. `tell` gets the
// lines for stderr (the workers' own output goes to stderr too). With request.ray, Ray creates
// the session under the root and an interpreter that cannot run the Ray job is nsel::Error
// (exit code 1) naming it.
DemoRun run_demo(const DemoRequest& request, const std::function<void(const std::string&)>& tell);

}  // namespace nsel
