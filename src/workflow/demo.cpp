#include "nsel/workflow/demo.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>

#include "nsel/analyze/exports.hpp"
#include "nsel/core/capture.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/rank_selection.hpp"
#include "nsel/core/settings.hpp"
#include "nsel/reports/layout.hpp"
#include "nsel/step/gpu_probe.hpp"
#include "nsel/sys/host.hpp"
#include "nsel/sys/nsys_installs.hpp"
#include "nsel/sys/process.hpp"
#include "nsel/workflow/summarize_reports.hpp"

namespace nsel {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultPatterns = "*policy*";
constexpr const char* kDefaultRange = "2:4";
constexpr const char* kDefaultRanks = "0";

// Without patterns and a window the demo would profile nothing: it picks the policy workers.
void default_selection(const std::function<void(const std::string&)>& tell) {
  const bool patterns_set = !environment_variable(kWorkerPatternsVariable).value_or("").empty();
  const bool range_set = !environment_variable(kStepRangeVariable).value_or("").empty();
  if (patterns_set || range_set) return;
  tell("nsel demo: " + std::string(kWorkerPatternsVariable) + " and " +
       std::string(kStepRangeVariable) + " are not set; using '" + kDefaultPatterns + "' and '" +
       kDefaultRange + "' (set both to choose other workers and steps)");
  setenv(std::string(kWorkerPatternsVariable).c_str(), kDefaultPatterns, 1);
  setenv(std::string(kStepRangeVariable).c_str(), kDefaultRange, 1);
}

// With --ranks and no rank or node filter set, the demo selects rank 0 to show the filter at work.
void default_rank_filter(const std::function<void(const std::string&)>& tell) {
  for (std::string_view name : {kRanksVariable, kLocalRanksVariable, kNodesVariable}) {
    if (!environment_variable(name).value_or("").empty()) return;
  }
  tell("nsel demo: --ranks is given and " + std::string(kRanksVariable) + " is not set; using '" +
       kDefaultRanks + "' (set it to choose other ranks)");
  setenv(std::string(kRanksVariable).c_str(), kDefaultRanks, 1);
}

// What `nsel exec` will decide for each worker (it sees RANK and LOCAL_RANK as set below).
void preview_selection(std::vector<DemoWorker>& workers, const ProfileSettings& settings,
                       const std::function<void(const std::string&)>& tell) {
  for (DemoWorker& worker : workers) {
    const std::string rank = std::to_string(worker.rank);
    const auto lookup = [&](std::string_view name) -> std::optional<std::string> {
      if (name == "RANK" || name == "LOCAL_RANK") return rank;
      return environment_variable(name);
    };
    PlanRequest request;
    request.worker = worker.name;
    request.identity = identify_process(lookup, {}, host_name());
    const WorkerPlan plan = select_worker(settings, request);
    worker.profiled = plan.profile;
    worker.reason = plan.reason;
    tell("nsel demo: " + worker.name + " rank " + rank + ": " +
         (plan.profile ? "profiled" : "runs bare") + " (" + plan.reason + ")");
  }
}

// The steps a report holds, read from its export (made once, as `nsel report` makes it).
DemoReport inspect(const fs::path& report, const std::optional<ExportSettings>& exports) {
  DemoReport listed{report, fs::file_size(report), {}, {}};
  if (!exports) {
    listed.problem = "nsys not found";
    return listed;
  }
  try {
    listed.steps = read_step_ranges(ensure_export(report, *exports).file);
  } catch (const Error& e) {
    listed.problem = e.what();
  }
  return listed;
}

constexpr std::string_view kWaitRange = "all-reduce";

// Each process's compute per step: the step less its wait for the others.
std::vector<DemoComputeStep> compute_per_step(const ReportSet& set) {
  std::vector<DemoComputeStep> out;
  for (const StepAcrossWorkers& across : set.comparison.steps) {
    DemoComputeStep step{across.step, {}, {}};
    std::vector<double> known;
    for (const ProcessSummary& process : set.processes) {
      std::optional<long long> compute;
      for (const StepSummary& s : process.steps) {
        if (s.step != across.step || s.cut) continue;  // a cut step's length is not its own
        long long wait = 0;
        for (const RangeShare& share : s.shares) {
          if (share.range == kWaitRange) wait += share.ns;
        }
        compute = s.duration_ns() - wait;
        known.push_back(static_cast<double>(*compute));
        break;
      }
      step.compute_ns.push_back(compute);
    }
    std::sort(known.begin(), known.end());
    const double median = known.empty() ? 0
                          : known.size() % 2 == 1
                              ? known[known.size() / 2]
                              : (known[known.size() / 2 - 1] + known[known.size() / 2]) / 2;
    const double limit = median * (1 + set.comparison.straggler_percent / 100);
    for (const auto& compute : step.compute_ns) {
      step.slow.push_back(known.size() > 1 && compute && static_cast<double>(*compute) > limit);
    }
    out.push_back(std::move(step));
  }
  return out;
}

std::optional<DemoStraggler> find_straggler(const std::vector<DemoComputeStep>& steps,
                                            std::size_t processes) {
  std::vector<DemoStraggler> per(processes);
  for (std::size_t p = 0; p < processes; ++p) per[p].process = p;
  for (const DemoComputeStep& step : steps) {
    std::vector<double> known;
    for (const auto& compute : step.compute_ns) {
      if (compute) known.push_back(static_cast<double>(*compute));
    }
    std::sort(known.begin(), known.end());
    if (known.empty()) continue;
    const double median = known.size() % 2 == 1
                              ? known[known.size() / 2]
                              : (known[known.size() / 2 - 1] + known[known.size() / 2]) / 2;
    for (std::size_t p = 0; p < processes; ++p) {
      if (!step.compute_ns[p]) continue;
      ++per[p].steps;
      if (!step.slow[p] || median <= 0) continue;
      ++per[p].slow_steps;
      per[p].mean_percent_above_median +=
          100.0 * (static_cast<double>(*step.compute_ns[p]) - median) / median;
    }
  }
  std::optional<DemoStraggler> worst;
  for (DemoStraggler& candidate : per) {
    if (candidate.slow_steps == 0) continue;
    candidate.mean_percent_above_median /= static_cast<double>(candidate.slow_steps);
    if (!worst || candidate.slow_steps > worst->slow_steps ||
        (candidate.slow_steps == worst->slow_steps &&
         candidate.mean_percent_above_median > worst->mean_percent_above_median)) {
      worst = candidate;
    }
  }
  return worst;
}

}  // namespace

int DemoRun::exit_code() const {
  return failed_workers == 0 && verdict.exit_code() == 0 ? 0 : 1;
}

DemoRun run_demo(const DemoRequest& request, const std::function<void(const std::string&)>& tell) {
  if (!request.root.empty() && fs::exists(request.root) && !fs::is_directory(request.root)) {
    throw Error(bad_value("--root", request.root.string(), "not a folder",
                          "a folder for the sessions (created if missing)"));
  }
  default_selection(tell);
  if (request.ranks > 0) default_rank_filter(tell);
  // Fails here, before any folder or process exists, on any bad setting.
  const ProfileSettings settings = ProfileSettings::from_environment(environment_variable);
  const std::string self = self_executable();
  const std::string worker_program =
      (fs::path(self).parent_path() / "nsel-example-worker").string();
  if (access(worker_program.c_str(), X_OK) != 0) {
    throw Error("the example worker " + quote(worker_program) +
                    " is missing; build the project (it sits beside nsel)",
                1);
  }
  std::optional<ExportSettings> exports;
  // Each report exported by the nsys that can read it, as `nsel report` and `nsel check` choose.
  if (auto installs = find_nsys_installs(environment_variable("NSEL_NSYS"),
                                         environment_variable("PATH").value_or(""));
      !installs.empty()) {
    exports.emplace();
    exports->installs = std::move(installs);
    exports->cache_dir = default_export_cache_dir(environment_variable("XDG_CACHE_HOME"),
                                                  environment_variable("HOME"));
  }
  const fs::path root =
      request.root.empty() ? fs::temp_directory_path() / "nsel-demo" : request.root;
  DemoRun run;
  run.nsight_dir =
      create_ray_session(fs::absolute(root), std::chrono::system_clock::now(), getpid());
  run.session = run.nsight_dir.parent_path().parent_path();
  tell("nsel demo: session " + run.session.string());
  tell("nsel demo: " + std::to_string(request.steps) + " steps; patterns " +
       quote(environment_variable(kWorkerPatternsVariable).value_or("")) + "; window " +
       windows_text(settings.windows));

  for (int rank = 0; rank < (request.ranks > 0 ? request.ranks : 2); ++rank) {
    run.workers.push_back({"dtensor_policy_worker", rank});
  }
  run.workers.push_back({"vllm_generation_worker", 0});
  preview_selection(run.workers, settings, tell);
  run.shows_ranks = request.ranks > 0 || settings.ranks || settings.local_ranks || settings.nodes;
  // Resolved once here and passed to every worker, so they all capture the same way.
  const CaptureMode capture = resolve_node_capture_mode(settings.capture);
  // The policy ranks meet in an all-reduce-like wait, through a folder of the session's own.
  const int policy_ranks = request.ranks > 0 ? request.ranks : 2;
  run.slow_rank = policy_ranks > 1 ? policy_ranks - 1 : -1;
  const fs::path meeting = run.session / "demo-all-reduce";
  fs::create_directories(meeting);
  const auto start = [&](const DemoWorker& worker) {
    std::vector<std::string> argv = {self,           "exec",
                                     "--worker",     worker.name,
                                     "--output-dir", run.nsight_dir.string(),
                                     "--capture",    std::string(to_string(capture)),
                                     "--",           worker_program,
                                     "--steps",      std::to_string(request.steps),
                                     "--work-ms",    std::to_string(request.work_ms),
                                     "--name",       worker.name};
    if (worker.name == "dtensor_policy_worker") {
      argv.insert(argv.end(), {"--train", meeting.string(), "--world", std::to_string(policy_ranks),
                               "--rank", std::to_string(worker.rank)});
      if (worker.rank == run.slow_rank) {
        argv.insert(argv.end(), {"--slow-percent", std::to_string(request.slow_percent)});
      }
    }
    return spawn_process(
        argv, {"RANK=" + std::to_string(worker.rank), "LOCAL_RANK=" + std::to_string(worker.rank)},
        run.nsight_dir.string(), ChildOutput::to_stderr);  // stdout carries only the listing
  };
  // All workers run together, as in a real job.
  std::vector<pid_t> running;
  for (const DemoWorker& worker : run.workers) running.push_back(start(worker));
  for (std::size_t i = 0; i < running.size(); ++i) {
    const int code = wait_exit_code(running[i]);
    if (code == 0) continue;
    ++run.failed_workers;
    tell("nsel demo: worker " + run.workers[i].name + " (rank " +
         std::to_string(run.workers[i].rank) + ") exited with code " + std::to_string(code));
  }

  std::vector<fs::path> reports;
  for (const auto& entry : fs::directory_iterator(run.nsight_dir)) {
    if (entry.path().extension() == ".nsys-rep") reports.push_back(entry.path());
    if (entry.path().extension() == ".qdstrm") run.leftovers.push_back(entry.path());
  }
  std::sort(reports.begin(), reports.end());
  for (const fs::path& report : reports) run.reports.push_back(inspect(report, exports));

  long long profiled = 0;
  for (const DemoWorker& worker : run.workers) profiled += worker.profiled ? 1 : 0;
  if (!reports.empty() && exports) {
    // As `nsel report` summarises them: steps, stragglers and the HTML page.
    ReportRequest summary;
    summary.paths = {run.nsight_dir};
    summary.html_file = run.session / "nsel-report.html";
    summary.environment = environment_variable;
    try {
      run.summary = summarize_reports(summary, ReportProgress{});
      run.html = summary.html_file;
      run.compute = compute_per_step(*run.summary);
      run.straggler = find_straggler(run.compute, run.summary->processes.size());
    } catch (const Error& e) {
      run.summary_problem = e.what();
    }
  }
  // As `nsel check` judges a run: every profiled worker must have left its window's steps.
  CheckRequest check;
  check.roots = {run.session};
  if (profiled > 0) check.expect = profiled;
  run.verdict = check_run(check);
  return run;
}

}  // namespace nsel
