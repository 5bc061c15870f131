// nsel demo: a small GRPO-shaped local job (two policy workers, one generation worker) launched
// through `nsel exec`, exactly as users launch theirs, with reports in a Ray-style session.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/values.hpp"
#include "nsel/render/demo.hpp"
#include "nsel/render/json_text.hpp"
#include "nsel/workflow/demo.hpp"

namespace nsel::cli {
namespace {

struct DemoOptions {
  std::string steps_text = "5";
  std::string work_ms_text = "150";
  std::string slow_percent_text = "50";
  std::string root;
  bool json = false;
  std::string ranks_text;  // empty: the default layout (two policy ranks)
  bool ray = false;
  bool verbose = false;
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
      "(Ray's layout, with a session_latest link), then are listed with the steps they hold.\n"
      "The policy ranks train: forward, backward, an all-reduce-like wait for the slowest rank,\n"
      "optimizer, the last rank --slow-percent slower. The demo ends with the step table, the\n"
      "straggler found, the verdict of 'nsel check' on the session (exit 1 unless every worker\n"
      "ran and every profiled one left its window's steps) and the HTML page's path.\n"
      "With --ray the same job runs as Ray actors on a local Ray cluster started under --root\n"
      "(Ray's own session folder), each actor's runtime env from nsel.plugin_runtime_env, with\n"
      "the Ray of NSEL_PYTHON (the package's 'nsel' sets it to its venv's python), else of\n"
      "python3 on PATH; RAY_RUNTIME_ENV_PLUGINS is set to nsel's plugin when unset.");
  demo->add_option("--steps", options->steps_text,
                   "training steps to run, 1 to 1000000 (default 5)")
      ->type_name("N");
  demo->add_option("--work-ms", options->work_ms_text,
                   "CPU work per step in milliseconds, 0 to 600000 (default 150)")
      ->type_name("MS");
  demo->add_option("--root", options->root,
                   "folder for the Ray-style sessions (default: <temp>/nsel-demo)")
      ->type_name("DIR");
  demo->add_option("--slow-percent", options->slow_percent_text,
                   "how much slower the last policy rank computes, 0 to 1000 (default 50)")
      ->type_name("P");
  demo->add_flag("--json", options->json,
                 std::string("print the produced reports as one JSON object, \"schema\" (") +
                     kDemoJsonSchema + ") its first key");
  demo->add_option("--ranks", options->ranks_text,
                   "run N policy ranks (RANK=0..N-1) to show rank selection; without\n"
                   "NSEL_PROFILE_RANKS (or a local-rank or node filter) only rank 0 is profiled")
      ->type_name("N");
  demo->add_flag("-v,--verbose", options->verbose,
                 "also show the workers' and nsys's own output once they end (it is kept in\n"
                 "<session>/logs/nsel-demo-workers.log; a failed worker's last lines are shown)");
  demo->add_flag("--ray", options->ray,
                 "run the job as Ray actors on a local Ray cluster (needs nsel's Python package\n"
                 "and Ray in the interpreter's environment)");

  return [options](const std::vector<std::string>& trailing) -> int {
    if (!trailing.empty()) throw Error("nsel demo takes no PROGRAM; see 'nsel demo --help'");
    DemoRequest request;
    request.steps = parse_whole_number(options->steps_text, "--steps", 1, 1000000);
    request.work_ms = parse_whole_number(options->work_ms_text, "--work-ms", 0, 600000);
    request.slow_percent =
        parse_whole_number(options->slow_percent_text, "--slow-percent", 0, 1000);
    request.root = options->root;
    request.ray = options->ray;
    request.verbose = options->verbose;
    request.ranks =
        options->ranks_text.empty()
            ? 0
            : static_cast<int>(parse_whole_number(options->ranks_text, "--ranks", 1, 64));
    DemoRun run = run_demo(request, tell_line);
    write_demo_page(run);

    if (options->json) {
      std::printf("%s\n", json_text(render_demo_json(run), JsonLayout::document).c_str());
    } else {
      std::fputs(render_demo_text(run).c_str(), stdout);
    }
    return run.exit_code();
  };
}

}  // namespace nsel::cli
