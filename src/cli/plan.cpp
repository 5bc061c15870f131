// nsel plan: what each worker would get, without starting anything.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/identity.hpp"
#include "nsel/core/command_line.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/values.hpp"
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

nlohmann::json identity_json(const ProcessIdentity& identity) {
  const auto one = [](const auto& identified) {
    return nlohmann::json{
        {"value", identified.value ? nlohmann::json(*identified.value) : nlohmann::json(nullptr)},
        {"source",
         identified.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(identified.source)}};
  };
  return {{"rank", one(identity.rank)},
          {"local_rank", one(identity.local_rank)},
          {"node", one(identity.node)}};
}

// The report names a profiled process will leave, <PID> standing for its process id.
std::vector<std::string> report_names(const WorkerPlan& plan) {
  std::vector<std::string> names;
  if (!plan.profile || plan.windows.empty()) return names;
  const auto name = [&](const StepWindow& window) {
    return plan.worker + "_" + window.text() + "_<PID>.nsys-rep";
  };
  if (plan.repeated_reports) {
    for (const StepWindow& window : plan.windows) names.push_back(name(window));
  } else {
    // One session, one report: named for the span of the windows (the window itself for one).
    names.push_back(name(StepWindow{plan.windows.front().start, plan.windows.back().stop}));
  }
  return names;
}

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
      {"step_range", plan.profile && plan.window ? nlohmann::json(windows_text(plan.windows))
                                                 : nlohmann::json(nullptr)},
      {"capture", plan.profile ? nlohmann::json(to_string(plan.capture)) : nlohmann::json(nullptr)},
      {"options", options},
      {"command", plan.command},
      {"environment", environment},
      {"reason", plan.reason},
      {"windows", nlohmann::json::array()},
      {"reports", report_names(plan)},
  };
  out.update(identity_json(plan.identity));
  for (const StepWindow& window : plan.windows) out["windows"].push_back(window.text());
  if (probe != nullptr) out["gpu"] = {{"usable", probe->usable}, {"detail", probe->detail}};
  return out;
}

// `brief`: the verdict line alone (one line per worker and rank with --ranks).
void print_human(const WorkerPlan& plan, const GpuProbe* probe, bool program_given,
                 const std::string& label, bool brief) {
  if (!plan.profile) {
    std::printf("%s: not profiled (%s)\n", shown(label).c_str(), shown(plan.reason).c_str());
    return;
  }
  std::printf("%s: profiled (%s)\n", shown(label).c_str(), shown(plan.reason).c_str());
  if (brief) return;
  for (const StepWindow& window : plan.windows) {
    std::printf("  steps:    %s (steps %lld to %lld)\n", window.text().c_str(), window.start,
                window.stop - 1);
  }
  if (plan.windows.size() > 1) {
    for (const std::string& name : report_names(plan)) {
      std::printf("  report:   %s\n", shown(name).c_str());
    }
  }
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
      "           nsel plan --json dtensor_policy_worker vllm_generation_worker\n"
      "With NSEL_PROFILE_RANKS set, '--ranks 0-7' shows which ranks of each worker are profiled\n"
      "and why; --rank, --local-rank and --node plan one process as 'nsel exec' would.");
  plan->add_option("worker", options->workers, "worker names, e.g. dtensor_policy_worker")
      ->required();
  plan->add_flag("--json", options->json, "one JSON object per worker and line");
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
    const std::string nsys =
        find_program("nsys", environment_variable("PATH").value_or("")).value_or("nsys");
    // As nsel exec does: the workarounds this nsys needs (all of them when there is none).
    const std::optional<NsysVersion> nsys_version =
        nsys == "nsys" ? std::nullopt : ask_nsys_version(nsys);
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
        if (options->json) {
          std::printf("%s\n", to_json(preview, preview.profile ? probe.get() : nullptr)
                                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                  .c_str());
        } else {
          print_human(preview, preview.profile ? probe.get() : nullptr, !program.empty(), label,
                      row.has_value());
        }
        flush_standard_output();
      }
    }
    return 0;
  };
}

}  // namespace nsel::cli
