#include "nsel/workflow/demo.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "nsel/analyze/exports.hpp"
#include "nsel/core/capture.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/rank_selection.hpp"
#include "nsel/core/ray_runtime_env.hpp"
#include "nsel/core/settings.hpp"
#include "nsel/core/terminal_text.hpp"
#include "nsel/reports/layout.hpp"
#include "nsel/step/gpu_probe.hpp"
#include "nsel/sys/files.hpp"
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

}  // namespace

int DemoRun::exit_code() const {
  return failed_workers == 0 && verdict.exit_code() == 0 ? 0 : 1;
}

namespace {

// Whether a worker's manifest in `nsight_dir` (pending ones too) says Nsight Systems itself
// failed.
bool nsys_itself_failed(const fs::path& nsight_dir) {
  std::error_code listing;
  for (const auto& entry : fs::directory_iterator(nsight_dir, listing)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".nsel.json") || !entry.is_regular_file()) continue;
    const auto text = read_small_file(entry.path());
    if (!text) continue;
    try {
      if (parse_manifest(*text, entry.path().string()).state == kManifestNsysFailed) return true;
    } catch (const Error&) {
      // a manifest being written, or not nsel's: not a verdict on nsys
    }
  }
  return false;
}

// The process demo: the workers are the example worker under `nsel exec`, in a session nsel
// creates the way Ray lays one out.
void run_local_workers_once(const DemoRequest& request, const ProfileSettings& settings,
                            const fs::path& root, DemoRun& run,
                            const std::function<void(const std::string&)>& tell) {
  const std::string self = self_executable();
  const std::string worker_program =
      (fs::path(self).parent_path() / "nsel-example-worker").string();
  if (access(worker_program.c_str(), X_OK) != 0) {
    throw Error("the example worker " + quote(worker_program) +
                    " is missing; build the project (it sits beside nsel)",
                1);
  }
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
  // Resolved once here and passed to every worker, so they all capture the same way.
  const CaptureMode capture = resolve_node_capture_mode(settings.capture);
  // The policy ranks meet in an all-reduce-like wait, through a folder of the session's own.
  const int policy_ranks = request.ranks > 0 ? request.ranks : 2;
  const fs::path meeting = run.session / "demo-all-reduce";
  run.worker_log = run.session / "logs" / "nsel-demo-workers.log";
  tell("nsel demo: the workers' and nsys's own output goes to " + run.worker_log.string());
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
    // nsys's own lines (capture started, Generating ..., progress bars of several workers at
    // once) would break up the demo's output: they go to the session's log.
    return spawn_process(
        argv, {"RANK=" + std::to_string(worker.rank), "LOCAL_RANK=" + std::to_string(worker.rank)},
        run.nsight_dir.string(), ChildOutput::to_log, false, run.worker_log);
  };
  // All workers run together, as in a real job.
  std::vector<pid_t> running;
  for (const DemoWorker& worker : run.workers) running.push_back(start(worker));
  for (std::size_t i = 0; i < running.size(); ++i) {
    const int code = wait_exit_code(running[i]);
    if (code == 0) continue;
    ++run.failed_workers;
    tell("nsel demo: worker " + run.workers[i].name + " (rank " +
         std::to_string(run.workers[i].rank) + ") exited with code " + std::to_string(code) +
         "; its output is in " + run.worker_log.string());
  }
  // The log holds every worker's lines; the last ones are where a failure says why.
  const std::size_t shown_lines =
      request.verbose ? std::string::npos : (run.failed_workers > 0 ? 10 : 0);
  if (shown_lines == 0) return;
  const std::string lines =
      last_output_lines(read_small_file(run.worker_log).value_or(""), shown_lines);
  tell(std::string("nsel demo: ") + (request.verbose ? "the" : "the last lines of the") +
       " workers' and nsys's own output:");
  std::size_t begin = 0;
  while (begin < lines.size()) {
    std::size_t end = lines.find('\n', begin);
    if (end == std::string::npos) end = lines.size();
    tell("  " + terminal_text(std::string_view(lines).substr(begin, end - begin)));
    begin = end + 1;
  }
}

// Nsight Systems sometimes fails a session started beside others (docs/nsys-facts.md); the
// demo's workers train together, so the whole demo runs once more, in a new session, and says
// so. A failure of anything else is shown as it is.
void run_local_workers(const DemoRequest& request, const ProfileSettings& settings,
                       const fs::path& root, DemoRun& run,
                       const std::function<void(const std::string&)>& tell) {
  run_local_workers_once(request, settings, root, run, tell);
  if (run.failed_workers == 0 || !nsys_itself_failed(run.nsight_dir)) return;
  tell("nsel demo: Nsight Systems itself failed in session " + run.session.string() +
       " (nsys_failed in a manifest there); running the demo once more in a new session");
  DemoRun fresh;
  fresh.slow_rank = run.slow_rank;
  fresh.shows_ranks = run.shows_ranks;
  run = std::move(fresh);
  run_local_workers_once(request, settings, root, run, tell);
}

// What python -m nsel._demo_ray wrote to its result file, or an Error saying why there is none.
void read_ray_result(const fs::path& file, const std::string& python, int code, DemoRun& run) {
  const std::string cannot = "nsel demo --ray: " + quote(python) + " could not run the Ray job";
  const std::string advice =
      "; run the nsel of a virtual environment that holds nsel's package and Ray (pip install "
      "<nsel wheel> 'ray[default]'), or set NSEL_PYTHON to its python";
  nlohmann::json result;
  try {
    std::ifstream in(file);
    if (!in)
      throw Error(cannot + " (exit code " + std::to_string(code) + ", no result)" + advice, 1);
    result = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(cannot + ": its result " + quote(file.string()) + " is not JSON (" + e.what() + ")",
                1);
  }
  std::error_code ignored;
  fs::remove(file, ignored);
  if (result.contains("error")) {
    throw Error(
        cannot + ": " + result.value("error", std::string()) +
            (result.value("error", std::string()).find("No module named 'ray'") != std::string::npos
                 ? advice
                 : ""),
        1);
  }
  try {
    run.ray_version = result.at("ray").get<std::string>();
    run.session = result.at("session").get<std::string>();
    run.nsight_dir = result.at("nsight_dir").get<std::string>();
    for (const nlohmann::json& worker : result.at("workers")) {
      DemoWorker listed{worker.at("worker").get<std::string>(), worker.at("rank").get<int>(),
                        worker.at("profiled").get<bool>(), worker.at("reason").get<std::string>(),
                        worker.at("pid").get<long long>()};
      run.workers.push_back(std::move(listed));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(cannot + ": its result lacks " + e.what(), 1);
  }
  if (code != 0) run.failed_workers = 1;
}

// The Ray demo: nsel's Python package runs the actors on a local Ray cluster under the root.
void run_ray_job(const DemoRequest& request, const ProfileSettings& settings, const fs::path& root,
                 DemoRun& run, const std::function<void(const std::string&)>& tell) {
  const std::string chosen = !request.python.empty()
                                 ? request.python
                                 : environment_variable("NSEL_PYTHON").value_or("python3");
  const std::optional<std::string> python =
      find_program(chosen, environment_variable("PATH").value_or(""));
  if (!python) {
    throw Error("nsel demo --ray: the Python interpreter " + quote(chosen) +
                    " (NSEL_PYTHON, else python3 on PATH) is not found; install nsel's package "
                    "with Ray into a virtual environment and run that environment's nsel",
                1);
  }
  fs::create_directories(fs::absolute(root));
  const fs::path result =
      fs::absolute(root) / ("nsel-demo-ray-" + std::to_string(getpid()) + ".json");
  tell("nsel demo: " + std::to_string(request.steps) + " steps on Ray; patterns " +
       quote(environment_variable(kWorkerPatternsVariable).value_or("")) + "; window " +
       windows_text(settings.windows) + "; python " + *python);
  std::vector<std::string> environment;
  if (environment_variable(kRayPluginsVariable).value_or("").empty()) {
    environment.push_back(std::string(kRayPluginsVariable) + "=" + nsel_plugin_setting());
    tell("nsel demo: " + std::string(kRayPluginsVariable) + " is not set; using '" +
         nsel_plugin_setting() + "' (nsel's plugin) for the local cluster");
  }
  const int policy_ranks = request.ranks > 0 ? request.ranks : 2;
  const std::vector<std::string> argv = {*python,
                                         "-m",
                                         "nsel._demo_ray",
                                         "--root",
                                         fs::absolute(root).string(),
                                         "--result",
                                         result.string(),
                                         "--steps",
                                         std::to_string(request.steps),
                                         "--work-ms",
                                         std::to_string(request.work_ms),
                                         "--slow-percent",
                                         std::to_string(request.slow_percent),
                                         "--ranks",
                                         std::to_string(policy_ranks)};
  const int code = wait_exit_code(spawn_process(argv, environment, "", ChildOutput::to_stderr));
  read_ray_result(result, *python, code, run);
}

}  // namespace

namespace {

// Where the demo's sessions go: --root, or <TMPDIR>/nsel-demo. Any path the system refuses (a
// name past 255 bytes, a file in the way, a folder denied, a TMPDIR that is no folder) is one
// line naming --root or TMPDIR, before anything is said or started.
fs::path demo_root(const fs::path& given) {
  if (given.empty()) return temporary_folder() / "nsel-demo";
  constexpr std::string_view kExpected = "a folder for the sessions (created if missing)";
  for (const fs::path& part : given) {
    if (part.native().size() > NAME_MAX) {
      throw Error(bad_value("--root", given.string(),
                            "a folder name of " + std::to_string(part.native().size()) +
                                " bytes, more than the " + std::to_string(NAME_MAX) +
                                " a file system allows",
                            kExpected));
    }
  }
  std::error_code ec;
  const fs::file_status status = fs::status(given, ec);
  if ((ec && ec != std::errc::no_such_file_or_directory) ||
      (fs::exists(status) && !fs::is_directory(status))) {
    throw Error(bad_value("--root", given.string(), ec ? ec.message() : "not a folder", kExpected));
  }
  return given;
}

}  // namespace

DemoRun run_demo(const DemoRequest& request, const std::function<void(const std::string&)>& tell) {
  const fs::path root = demo_root(request.root);
  default_selection(tell);
  if (request.ranks > 0) default_rank_filter(tell);
  // Fails here, before any folder or process exists, on any bad setting.
  const ProfileSettings settings = ProfileSettings::from_environment(environment_variable);
  std::optional<ExportSettings> exports;
  // Each report exported by the nsys that can read it, as `nsel report` and `nsel check` choose.
  if (ExportSettings found = export_settings_from(environment_variable); !found.installs.empty()) {
    exports = std::move(found);
  }
  DemoRun run;
  const int policy_ranks = request.ranks > 0 ? request.ranks : 2;
  run.slow_rank = policy_ranks > 1 ? policy_ranks - 1 : -1;
  run.shows_ranks = request.ranks > 0 || settings.ranks || settings.local_ranks || settings.nodes;
  if (request.ray) {
    run_ray_job(request, settings, root, run, tell);
  } else {
    run_local_workers(request, settings, root, run, tell);
  }

  std::vector<fs::path> reports;
  std::error_code listing;
  for (const auto& entry : fs::directory_iterator(run.nsight_dir, listing)) {
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
    summary.environment = environment_variable;
    try {
      run.summary = summarize_reports(summary, ReportProgress{});
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
