// nsel plan: what each worker would get, without starting anything.
#include <cstdio>
#include <memory>
#include <set>

#include "cli/commands.hpp"
#include "cli/identity.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/values.hpp"
#include "nsel/launch/nsys_check.hpp"
#include "nsel/render/plan.hpp"
#include "nsel/step/gpu_probe.hpp"
#include "nsel/sys/nsys_installs.hpp"

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
    ProfileSettings settings = ProfileSettings::from_environment(environment_variable);
    if (!options->capture.empty()) {
      settings.capture = parse_capture_mode(options->capture, "--capture");
    }
    std::unique_ptr<GpuProbe> probe;  // asked once, and only if some worker is profiled
    // The nsys nsel exec would use, found and asked as exec does (check_nsys), and so the
    // workarounds it needs (all of them when there is none, shown as plain "nsys").
    const NsysCheck nsys_check = check_nsys(environment_variable("PATH").value_or(""));
    const std::string nsys = nsys_check.path.value_or("nsys");
    const std::optional<NsysVersion> nsys_version =
        nsys_check.version.empty() ? std::nullopt : parse_nsys_version(nsys_check.version);
    // Each distinct option set is shown to this node's nsys once, as nsel exec will.
    std::set<std::vector<std::string>> options_asked;
    const ProcessIdentity self = identify_this_process(*identity);
    // One row per rank of --ranks, or one for this process's own identity.
    std::vector<std::optional<long long>> rows = {std::nullopt};
    if (!options->ranks.empty()) {
      rows.clear();
      for (long long rank : RankList::parse(options->ranks, "--ranks").expand("--ranks")) {
        rows.push_back(rank);
      }
    }
    for (const std::string& worker : options->workers) {
      for (const std::optional<long long>& row : rows) {
        PlanRequest request{worker, CaptureMode::nvtx, options->output_dir, program, nsys};
        request.identity = self;
        request.nsys_version = nsys_version;
        std::string label = worker;
        if (row) {
          request.identity.rank = {*row, "--ranks", ""};
          label += " rank " + std::to_string(*row);
        }
        WorkerPlan preview = select_worker(settings, request);
        if (!preview.notice.empty()) std::fprintf(stderr, "%s\n", preview.notice.c_str());
        if (preview.profile) {
          const bool needs_probe =
              settings.capture == CaptureMode::automatic || settings.capture == CaptureMode::cuda;
          if (!probe && needs_probe) probe = std::make_unique<GpuProbe>(probe_gpu_isolated());
          request.node_capture =
              resolve_capture_mode(settings.capture, probe ? *probe : GpuProbe{});
          complete_plan(preview, settings, request);
          if (nsys_version && options_asked.insert(preview.options.to_argv()).second) {
            require_known_options(preview.options, nsys, nsys_version->text,
                                  environment_variable(kExtraOptionsVariable));
          }
          std::fprintf(stderr, "%s\n", preview.log_line().c_str());
          std::optional<GpuVisibility> gpu;
          if (probe) {
            gpu = GpuVisibility{probe->usable, probe->detail,
                                environment_variable("CUDA_VISIBLE_DEVICES")};
          }
          for (const std::string& line : plan_guidance(preview, settings.capture, gpu)) {
            std::fprintf(stderr, "%s\n", line.c_str());
          }
        }
        const GpuProbe* shown_probe = preview.profile ? probe.get() : nullptr;
        if (options->json) {
          std::printf("%s\n", render_plan_json(preview, shown_probe)
                                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                  .c_str());
        } else {
          std::fputs(
              render_plan_text(preview, shown_probe, !program.empty(), label, row.has_value())
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
