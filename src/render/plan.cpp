#include "nsel/render/plan.hpp"

#include <vector>

#include "nsel/core/command_line.hpp"
#include "nsel/core/terminal_text.hpp"
#include "render/formatted.hpp"
#include "render/json_schema.hpp"
#include "render/terminal_cells.hpp"

namespace nsel {
namespace {

using render_detail::formatted;
using render_detail::shown;

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

}  // namespace

nlohmann::ordered_json render_plan_json(const WorkerPlan& plan, const GpuProbe* probe) {
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
  return render_detail::schema_first(kPlanJsonSchema, out);
}

std::string render_plan_text(const WorkerPlan& plan, const GpuProbe* probe, bool program_given,
                             const std::string& label, bool brief) {
  if (!plan.profile) {
    return formatted("%s: not profiled (%s)\n", shown(label).c_str(), shown(plan.reason).c_str());
  }
  std::string out =
      formatted("%s: profiled (%s)\n", shown(label).c_str(), shown(plan.reason).c_str());
  if (brief) return out;
  for (const StepWindow& window : plan.windows) {
    out += formatted("  steps:    %s (steps %lld to %lld)\n", window.text().c_str(), window.start,
                     window.stop - 1);
  }
  if (plan.windows.size() > 1) {
    for (const std::string& name : report_names(plan)) {
      out += formatted("  report:   %s\n", shown(name).c_str());
    }
  }
  out += formatted("  capture:  %s", std::string(to_string(plan.capture)).c_str());
  if (probe != nullptr) out += formatted(" (GPU: %s)", shown(probe->detail).c_str());
  out += "\n";
  for (const auto& [key, value] : plan.options.entries()) {
    out += formatted("  option:   %s = %s\n", shown(key).c_str(), shown(value).c_str());
  }
  std::string command = shell_join(plan.command);
  if (!program_given) command += " PROGRAM [ARGS...]";
  // Words as a shell reads them, with any control byte escaped for the terminal (--json keeps
  // them exact).
  out += formatted("  command:  %s\n", terminal_text(command).c_str());
  for (const std::string& entry : plan.environment) {
    out += formatted("  env:      %s\n", terminal_text(shell_quote(entry)).c_str());
  }
  return out;
}

}  // namespace nsel
