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
#include "nsel/sys/process.hpp"

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

}  // namespace

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
  if (const auto nsys = find_program("nsys", environment_variable("PATH").value_or(""))) {
    exports.emplace();
    exports->nsys = *nsys;
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
  const auto start = [&](const DemoWorker& worker) {
    const std::vector<std::string> argv = {self,           "exec",
                                           "--worker",     worker.name,
                                           "--output-dir", run.nsight_dir.string(),
                                           "--capture",    std::string(to_string(capture)),
                                           "--",           worker_program,
                                           "--steps",      std::to_string(request.steps),
                                           "--work-ms",    std::to_string(request.work_ms),
                                           "--name",       worker.name};
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
  return run;
}

}  // namespace nsel
