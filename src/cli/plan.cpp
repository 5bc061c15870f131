// nsel plan: what each worker would get, without starting anything.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "nsel/command_line.hpp"
#include "nsel/gpu_probe.hpp"
#include "nsel/plan.hpp"
#include "nsel/values.hpp"

namespace nsel::cli {
namespace {

struct PlanOptions {
  std::vector<std::string> workers;
  bool json = false;
  std::string capture;
  std::string output_dir;
};

nlohmann::json to_json(const WorkerPlan& plan, const GpuProbe* probe) {
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [key, value] : plan.options.entries()) options[key] = value;
  nlohmann::json environment = nlohmann::json::object();
  for (const std::string& entry : plan.environment) {
    const size_t equals = entry.find('=');
    environment[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  nlohmann::json out = {
      {"worker", plan.worker},
      {"profile", plan.profile},
      {"pattern", plan.pattern ? nlohmann::json(*plan.pattern) : nlohmann::json(nullptr)},
      {"step_range",
       plan.profile && plan.window ? nlohmann::json(plan.window->text()) : nlohmann::json(nullptr)},
      {"capture", plan.profile ? nlohmann::json(to_string(plan.capture)) : nlohmann::json(nullptr)},
      {"options", options},
      {"command", plan.command},
      {"environment", environment},
      {"reason", plan.reason},
  };
  if (probe != nullptr) out["gpu"] = {{"usable", probe->usable}, {"detail", probe->detail}};
  return out;
}

void print_human(const WorkerPlan& plan, const GpuProbe* probe, bool program_given) {
  if (!plan.profile) {
    std::printf("%s: not profiled (%s)\n", plan.worker.c_str(), plan.reason.c_str());
    return;
  }
  std::printf("%s: profiled (%s)\n", plan.worker.c_str(), plan.reason.c_str());
  std::printf("  steps:    %s (steps %lld to %lld)\n", plan.window->text().c_str(),
              plan.window->start, plan.window->stop - 1);
  std::printf("  capture:  %s", std::string(to_string(plan.capture)).c_str());
  if (probe != nullptr) std::printf(" (GPU: %s)", probe->detail.c_str());
  std::printf("\n");
  for (const auto& [key, value] : plan.options.entries()) {
    std::printf("  option:   %s = %s\n", key.c_str(), value.c_str());
  }
  std::string command = shell_join(plan.command);
  if (!program_given) command += " PROGRAM [ARGS...]";
  std::printf("  command:  %s\n", command.c_str());
  for (const std::string& entry : plan.environment) {
    std::printf("  env:      %s\n", shell_quote(entry).c_str());
  }
}

}  // namespace

Action add_plan(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* plan = app.add_subcommand(
      "plan",
      "Show, for each WORKER name, whether it will be profiled, the matched pattern, the step\n"
      "window, the nsys options and the full command, from the same environment 'nsel exec'\n"
      "reads. Add '-- PROGRAM [ARGS...]' to see the command for a real program.\n"
      "Example: NRL_NSYS_WORKER_PATTERNS='*policy*' NRL_NSYS_PROFILE_STEP_RANGE=2:4 \\\n"
      "           nsel plan --json dtensor_policy_worker vllm_generation_worker");
  plan->add_option("worker", options->workers, "worker names, e.g. dtensor_policy_worker")
      ->required();
  plan->add_flag("--json", options->json, "one JSON object per worker and line");
  plan->add_option("--capture", options->capture,
                   "force the capture mode: auto|cuda|nvtx|none (default: NSEL_CAPTURE or auto)");
  plan->add_option("--output-dir", options->output_dir, "folder the reports would be written to");

  return [options](const std::vector<std::string>& program) {
    for (const std::string& worker : options->workers) parse_worker_name(worker, "WORKER");
    ProfileSettings settings = ProfileSettings::from_environment(environment);
    if (!options->capture.empty()) {
      settings.capture = parse_capture_mode(options->capture, "--capture");
    }
    std::unique_ptr<GpuProbe> probe;  // asked once, and only if some worker is profiled
    const std::string nsys = find_nsys().value_or("nsys");
    for (const std::string& worker : options->workers) {
      PlanRequest request{worker, CaptureMode::nvtx, options->output_dir, program, nsys};
      WorkerPlan preview = plan_worker(settings, request);
      if (preview.profile) {
        if (!probe && settings.capture == CaptureMode::automatic) {
          probe = std::make_unique<GpuProbe>(probe_gpu_isolated());
        }
        request.node_capture = resolve_capture_mode(settings.capture, probe ? *probe : GpuProbe{});
        preview = plan_worker(settings, request);
        std::fprintf(stderr, "%s\n", preview.log_line().c_str());
      }
      if (options->json) {
        std::printf("%s\n", to_json(preview, preview.profile ? probe.get() : nullptr)
                                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                .c_str());
      } else {
        print_human(preview, preview.profile ? probe.get() : nullptr, !program.empty());
      }
      std::fflush(stdout);
    }
    return 0;
  };
}

}  // namespace nsel::cli
