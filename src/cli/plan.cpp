// nsel plan: what each worker would get, without starting anything.
#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "cli/identity.hpp"
#include "nsel/core/values.hpp"
#include "nsel/render/json_text.hpp"
#include "nsel/render/plan.hpp"
#include "nsel/workflow/run_worker.hpp"

namespace nsel::cli {
namespace {

struct PlanOptions {
  std::vector<std::string> workers;
  bool json = false;
  std::string capture;
  std::string output_dir;
  std::string ranks;
};

}  // namespace

Action add_plan(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* plan = app.add_subcommand(
      "plan",
      "Show, for each WORKER name, whether it will be profiled, the matched pattern, the step\n"
      "window, the nsys options and the full command, from the same environment 'nsel exec'\n"
      "reads. Add '-- PROGRAM [ARGS...]' to see the command for a real program.\n"
      "Example: NRL_NSYS_WORKER_PATTERNS='*policy*' NRL_NSYS_PROFILE_STEP_RANGE=2:4 \\\n"
      "           nsel plan --json dtensor_policy_worker vllm_generation_worker\n"
      "With NSEL_PROFILE_RANKS set, '--ranks 0-7' shows which ranks of each worker are profiled\n"
      "and why; --rank, --local-rank and --node plan one process as 'nsel exec' would.");
  plan->add_option("worker", options->workers, "worker names, e.g. dtensor_policy_worker")
      ->required();
  plan->add_flag("--json", options->json,
                 std::string("one JSON object per worker and line, \"schema\" (") +
                     kPlanJsonSchema + ") its first key");
  plan->add_option("--capture", options->capture,
                   "force the capture mode: auto|cuda|nvtx|none (default: NSEL_CAPTURE or auto)")
      ->type_name("MODE");
  plan->add_option("--output-dir", options->output_dir, "folder the reports would be written to")
      ->type_name("DIR");
  const auto identity = add_identity_flags(plan);
  plan->add_option("--ranks", options->ranks,
                   "plan every rank of this list (e.g. 0-7), one line per worker and rank, to see "
                   "which ranks NSEL_PROFILE_RANKS selects")
      ->excludes(identity->rank_option)
      ->type_name("LIST");

  return [options, identity](const std::vector<std::string>& program) {
    for (const std::string& worker : options->workers) parse_worker_name(worker, "WORKER");
    // One row per rank of --ranks, or one for this process's own identity.
    std::vector<std::optional<long long>> rows = {std::nullopt};
    if (!options->ranks.empty()) {
      rows.clear();
      for (long long rank : RankList::parse(options->ranks, "--ranks").expand("--ranks")) {
        rows.push_back(rank);
      }
    }
    PlanningMemo memo;  // nsys, the GPU and each option set asked once for all rows
    for (const std::string& worker : options->workers) {
      for (const std::optional<long long>& row : rows) {
        WorkerRequest request;
        request.worker = worker;
        request.output_dir = options->output_dir;
        request.capture = options->capture;
        request.identity = given_identity(*identity);
        request.program = program;
        request.environment = environment_variable;
        request.listed_rank = row;
        const WorkerLaunch preview = preview_worker(request, memo);
        // As nsel exec tells them: its notices, then the contract's log line.
        for (const std::string& line : preview.notices) tell_line(line);
        if (preview.profiled) tell_line(preview.plan.log_line());
        const GpuProbe* shown_probe = preview.probe ? &*preview.probe : nullptr;
        if (options->json) {
          std::printf(
              "%s\n",
              json_text(render_plan_json(preview.plan, shown_probe), JsonLayout::line).c_str());
        } else {
          const std::string label = row ? worker + " rank " + std::to_string(*row) : worker;
          std::fputs(
              render_plan_text(preview.plan, shown_probe, !program.empty(), label, row.has_value())
                  .c_str(),
              stdout);
        }
        flush_standard_output();
      }
    }
    return 0;
  };
}

}  // namespace nsel::cli
