// nsel demo: a small GRPO-shaped local job (two policy workers, one generation worker) launched
// through `nsel exec`, exactly as users launch theirs, with reports in a Ray-style session.
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/identity.hpp"
#include "nsel/analyze/step_ranges.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/settings.hpp"
#include "nsel/core/values.hpp"
#include "nsel/reports/layout.hpp"
#include "nsel/step/gpu_probe.hpp"
#include "nsel/sys/host.hpp"
#include "nsel/sys/process.hpp"

namespace nsel::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultPatterns = "*policy*";
constexpr const char* kDefaultRange = "2:4";

struct DemoOptions {
  std::string steps_text = "5";
  std::string work_ms_text = "150";
  long long steps = 5;
  long long work_ms = 150;
  std::string root;
  bool json = false;
  int ranks = 0;  // 0: the default layout (two policy ranks)
};

struct DemoWorker {
  std::string name;
  int rank;
  bool profiled = false;
  std::string reason{};
};

constexpr const char* kDefaultRanks = "0";

// With --ranks and no rank or node filter set, the demo selects rank 0 to show the filter at work.
void default_rank_filter() {
  for (std::string_view name : {kRanksVariable, kLocalRanksVariable, kNodesVariable}) {
    if (!environment_variable(name).value_or("").empty()) return;
  }
  std::fprintf(stderr,
               "nsel demo: --ranks is given and %s is not set; using '%s' (set it to choose "
               "other ranks)\n",
               std::string(kRanksVariable).c_str(), kDefaultRanks);
  setenv(std::string(kRanksVariable).c_str(), kDefaultRanks, 1);
}

// What `nsel exec` will decide for each worker (it sees RANK and LOCAL_RANK as set below).
void preview_selection(std::vector<DemoWorker>& workers, const ProfileSettings& settings) {
  for (DemoWorker& worker : workers) {
    const std::string rank = std::to_string(worker.rank);
    const auto lookup = [&](std::string_view name) -> std::optional<std::string> {
      if (name == "RANK" || name == "LOCAL_RANK") return rank;
      return environment_variable(name);
    };
    PlanRequest request;
    request.worker = worker.name;
    request.identity = identify_process(lookup, {}, host_name());
    const WorkerPlan plan = plan_worker(settings, request);
    worker.profiled = plan.profile;
    worker.reason = plan.reason;
    std::fprintf(stderr, "nsel demo: %s rank %d: %s (%s)\n", worker.name.c_str(), worker.rank,
                 plan.profile ? "profiled" : "runs bare", plan.reason.c_str());
  }
}

struct ListedReport {
  fs::path path;
  std::uintmax_t bytes = 0;
  std::vector<StepRange> steps;
  std::string problem;
};

// Exports one report to a temporary SQLite file and reads its steps back.
ListedReport inspect(const fs::path& report, const std::string& nsys) {
  ListedReport listed{report, fs::file_size(report), {}, {}};
  const fs::path export_path =
      fs::temp_directory_path() /
      ("nsel-demo-" + std::to_string(getpid()) + "-" + report.stem().string() + ".sqlite");
  const std::vector<std::string> argv = {nsys,
                                         "export",
                                         "--type",
                                         "sqlite",
                                         "--force-overwrite",
                                         "true",
                                         "-o",
                                         export_path.string(),
                                         report.string()};
  const pid_t child = spawn_process(argv, {}, "", ChildOutput::discard);
  const int code = wait_exit_code(child);
  if (code != 0 || !fs::exists(export_path)) {
    listed.problem = "nsys export failed with exit code " + std::to_string(code);
  } else {
    try {
      listed.steps = read_step_ranges(export_path);
    } catch (const Error& e) {
      listed.problem = e.what();
    }
  }
  std::error_code ec;
  fs::remove(export_path, ec);
  return listed;
}

}  // namespace

Action add_demo(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* demo = app.add_subcommand(
      "demo",
      "Run a small GRPO-shaped job on this machine: 'dtensor_policy_worker' x2 (or x N with\n"
      "--ranks N) and 'vllm_generation_worker' x1, each the example worker launched through\n"
      "'nsel exec' with RANK and LOCAL_RANK set.\n"
      "Honours NRL_NSYS_WORKER_PATTERNS and NRL_NSYS_PROFILE_STEP_RANGE; with neither set it\n"
      "uses '*policy*' and '2:4'. Reports land in <root>/session_<time>_<pid>/logs/nsight/\n"
      "(Ray's layout, with a session_latest link), then are listed with the steps they hold.");
  demo->add_option("--steps", options->steps_text,
                   "training steps to run, 1 to 1000000 (default 5)")
      ->type_name("N");
  demo->add_option("--work-ms", options->work_ms_text,
                   "CPU work per step in milliseconds, 0 to 600000 (default 150)")
      ->type_name("MS");
  demo->add_option("--root", options->root,
                   "folder for the Ray-style sessions (default: <temp>/nsel-demo)")
      ->type_name("DIR");
  demo->add_flag("--json", options->json, "print the produced reports as one JSON object");
  demo->add_option("--ranks", options->ranks,
                   "run N policy ranks (RANK=0..N-1) to show rank selection; without\n"
                   "NSEL_PROFILE_RANKS (or a local-rank or node filter) only rank 0 is profiled")
      ->check(CLI::Range(1, 64))
      ->type_name("N");

  return [options](const std::vector<std::string>& trailing) -> int {
    if (!trailing.empty()) throw Error("nsel demo takes no PROGRAM; see 'nsel demo --help'");
    options->steps = parse_whole_number(options->steps_text, "--steps", 1, 1000000);
    options->work_ms = parse_whole_number(options->work_ms_text, "--work-ms", 0, 600000);
    if (!options->root.empty() && fs::exists(options->root) && !fs::is_directory(options->root)) {
      throw Error(bad_value("--root", options->root, "not a folder",
                            "a folder for the sessions (created if missing)"));
    }
    const bool patterns_set = !environment_variable(kWorkerPatternsVariable).value_or("").empty();
    const bool range_set = !environment_variable(kStepRangeVariable).value_or("").empty();
    if (!patterns_set && !range_set) {
      std::fprintf(stderr,
                   "nsel demo: %s and %s are not set; using '%s' and '%s' "
                   "(set both to choose other workers and steps)\n",
                   std::string(kWorkerPatternsVariable).c_str(),
                   std::string(kStepRangeVariable).c_str(), kDefaultPatterns, kDefaultRange);
      setenv(std::string(kWorkerPatternsVariable).c_str(), kDefaultPatterns, 1);
      setenv(std::string(kStepRangeVariable).c_str(), kDefaultRange, 1);
    }
    if (options->ranks > 0) default_rank_filter();
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
    const auto nsys = find_program("nsys", environment_variable("PATH").value_or(""));
    const fs::path root =
        options->root.empty() ? fs::temp_directory_path() / "nsel-demo" : fs::path(options->root);
    const fs::path nsight =
        create_ray_session(fs::absolute(root), std::chrono::system_clock::now(), getpid());
    std::fprintf(stderr, "nsel demo: session %s\n", nsight.parent_path().parent_path().c_str());
    std::fprintf(stderr, "nsel demo: %lld steps; patterns %s; window %s\n", options->steps,
                 quote(environment_variable(kWorkerPatternsVariable).value_or("")).c_str(),
                 windows_text(settings.windows).c_str());

    std::vector<DemoWorker> workers;
    for (int rank = 0; rank < (options->ranks > 0 ? options->ranks : 2); ++rank) {
      workers.push_back({"dtensor_policy_worker", rank});
    }
    workers.push_back({"vllm_generation_worker", 0});
    preview_selection(workers, settings);
    // Resolved once here and passed to every worker, so they all capture the same way.
    const CaptureMode capture = resolve_node_capture_mode(settings.capture);
    const auto start = [&](const DemoWorker& worker) {
      const std::vector<std::string> argv = {self,           "exec",
                                             "--worker",     worker.name,
                                             "--output-dir", nsight.string(),
                                             "--capture",    std::string(to_string(capture)),
                                             "--",           worker_program,
                                             "--steps",      std::to_string(options->steps),
                                             "--work-ms",    std::to_string(options->work_ms),
                                             "--name",       worker.name};
      return spawn_process(
          argv,
          {"RANK=" + std::to_string(worker.rank), "LOCAL_RANK=" + std::to_string(worker.rank)},
          nsight.string(), ChildOutput::to_stderr);  // stdout carries only the listing
    };
    int failures = 0;
    const auto finish = [&](const DemoWorker& worker, pid_t child) {
      const int code = wait_exit_code(child);
      if (code != 0) {
        ++failures;
        std::fprintf(stderr, "nsel demo: worker %s (rank %d) exited with code %d\n",
                     worker.name.c_str(), worker.rank, code);
      }
    };
    // All workers run together, as in a real job.
    std::vector<pid_t> running;
    for (const DemoWorker& worker : workers) running.push_back(start(worker));
    for (size_t i = 0; i < running.size(); ++i) finish(workers[i], running[i]);

    std::vector<fs::path> reports;
    std::vector<fs::path> leftovers;
    for (const auto& entry : fs::directory_iterator(nsight)) {
      if (entry.path().extension() == ".nsys-rep") reports.push_back(entry.path());
      if (entry.path().extension() == ".qdstrm") leftovers.push_back(entry.path());
    }
    std::sort(reports.begin(), reports.end());
    std::vector<ListedReport> listed;
    for (const fs::path& report : reports) {
      listed.push_back(nsys ? inspect(report, *nsys)
                            : ListedReport{report, fs::file_size(report), {}, "nsys not found"});
    }

    if (options->json) {
      nlohmann::json out = {{"session", nsight.parent_path().parent_path().string()},
                            {"nsight_dir", nsight.string()},
                            {"failed_workers", failures},
                            {"workers", nlohmann::json::array()},
                            {"reports", nlohmann::json::array()},
                            {"leftovers", nlohmann::json::array()}};
      for (const DemoWorker& worker : workers) {
        out["workers"].push_back({{"worker", worker.name},
                                  {"rank", worker.rank},
                                  {"profiled", worker.profiled},
                                  {"reason", worker.reason}});
      }
      for (const ListedReport& report : listed) {
        nlohmann::json steps = nlohmann::json::array();
        for (const StepRange& s : report.steps) steps.push_back(s.step);
        out["reports"].push_back(
            {{"path", report.path.string()},
             {"bytes", report.bytes},
             {"steps", steps},
             {"problem",
              report.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.problem)}});
      }
      for (const fs::path& leftover : leftovers) out["leftovers"].push_back(leftover.string());
      std::printf("%s\n",
                  out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      // Which ranks ran under nsys, when ranks are what the demo shows.
      if (options->ranks > 0 || settings.ranks || settings.local_ranks || settings.nodes) {
        std::printf("\nWorkers:\n");
        for (const DemoWorker& worker : workers) {
          std::printf("  %-24s rank %-3d %s\n", worker.name.c_str(), worker.rank,
                      worker.profiled ? "profiled" : "bare (no nsys)");
        }
      }
      std::printf("\nReports in %s:\n", nsight.c_str());
      if (listed.empty()) std::printf("  (none: no worker matched the patterns)\n");
      for (const ListedReport& report : listed) {
        std::printf("  %-48s %10s  steps %s%s%s\n", report.path.filename().c_str(),
                    size_text(report.bytes).c_str(), describe_steps(report.steps).c_str(),
                    report.problem.empty() ? "" : "  ! ", report.problem.c_str());
      }
      for (const fs::path& leftover : leftovers) {
        std::printf("  %-48s (unfinished .qdstrm: the importer did not run)\n",
                    leftover.filename().c_str());
      }
    }
    return failures == 0 ? 0 : 1;
  };
}

}  // namespace nsel::cli
