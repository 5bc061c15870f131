// nsel demo: a small GRPO-shaped local job (two policy workers, one generation worker) launched
// through `nsel exec`, exactly as users launch theirs, with reports in a Ray-style session.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "nsel/analyze/step_ranges.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/values.hpp"
#include "nsel/workflow/demo.hpp"

namespace nsel::cli {
namespace {

namespace fs = std::filesystem;

struct DemoOptions {
  std::string steps_text = "5";
  std::string work_ms_text = "150";
  std::string root;
  bool json = false;
  int ranks = 0;  // 0: the default layout (two policy ranks)
};

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
    DemoRequest request;
    request.steps = parse_whole_number(options->steps_text, "--steps", 1, 1000000);
    request.work_ms = parse_whole_number(options->work_ms_text, "--work-ms", 0, 600000);
    request.root = options->root;
    request.ranks = options->ranks;
    const DemoRun run = run_demo(
        request, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });

    if (options->json) {
      nlohmann::json out = {
          {"session", run.session.string()},      {"nsight_dir", run.nsight_dir.string()},
          {"failed_workers", run.failed_workers}, {"workers", nlohmann::json::array()},
          {"reports", nlohmann::json::array()},   {"leftovers", nlohmann::json::array()}};
      for (const DemoWorker& worker : run.workers) {
        out["workers"].push_back({{"worker", worker.name},
                                  {"rank", worker.rank},
                                  {"profiled", worker.profiled},
                                  {"reason", worker.reason}});
      }
      for (const DemoReport& report : run.reports) {
        nlohmann::json steps = nlohmann::json::array();
        for (const StepRange& s : report.steps) steps.push_back(s.step);
        out["reports"].push_back(
            {{"path", report.path.string()},
             {"bytes", report.bytes},
             {"steps", steps},
             {"problem",
              report.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.problem)}});
      }
      for (const fs::path& leftover : run.leftovers) out["leftovers"].push_back(leftover.string());
      std::printf("%s\n",
                  out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      if (run.shows_ranks) {
        std::printf("\nWorkers:\n");
        for (const DemoWorker& worker : run.workers) {
          std::printf("  %-24s rank %-3d %s\n", worker.name.c_str(), worker.rank,
                      worker.profiled ? "profiled" : "bare (no nsys)");
        }
      }
      std::printf("\nReports in %s:\n", run.nsight_dir.c_str());
      if (run.reports.empty()) std::printf("  (none: no worker matched the patterns)\n");
      for (const DemoReport& report : run.reports) {
        std::printf("  %-48s %10s  steps %s%s%s\n", report.path.filename().c_str(),
                    size_text(report.bytes).c_str(), describe_steps(report.steps).c_str(),
                    report.problem.empty() ? "" : "  ! ", report.problem.c_str());
      }
      for (const fs::path& leftover : run.leftovers) {
        std::printf("  %-48s (unfinished .qdstrm: the importer did not run)\n",
                    leftover.filename().c_str());
      }
    }
    return run.failed_workers == 0 ? 0 : 1;
  };
}

}  // namespace nsel::cli
