#include "nsel/core/ray_runtime_env.hpp"

#include <nlohmann/json.hpp>

#include "nsel/core/command_line.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/values.hpp"

namespace nsel {

std::vector<std::pair<std::string, std::string>> ray_nsight_options(const WorkerPlan& plan) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!plan.profile) return out;
  NsysOptions options = plan.options;
  if (!plan.environment.empty()) {
    // nsys takes several variables as A=B,C=D in one --env-var.
    std::string variables = options.get("env-var").value_or("");
    for (const std::string& variable : plan.environment) {
      if (!variables.empty()) variables += ',';
      variables += variable;
    }
    options.set("env-var", variables);
  }
  for (const auto& [key, value] : options.entries()) out.emplace_back(key, shell_quote(value));
  return out;
}

std::string ray_plugin_executable(std::string_view nsel_binary, std::string_view worker,
                                  std::string_view output_dir, std::string_view py_executable,
                                  const std::vector<std::string>& environment,
                                  const IdentityOverrides& identity) {
  std::vector<std::string> words;
  if (!environment.empty()) {
    words.emplace_back("env");
    words.insert(words.end(), environment.begin(), environment.end());
  }
  // The NAME=value spellings keep a name that starts with '-' from reading as an option.
  for (std::string word :
       {std::string(nsel_binary), std::string("exec"), "--worker=" + std::string(worker),
        "--output-dir=" + std::string(output_dir)}) {
    words.push_back(std::move(word));
  }
  if (identity.rank) words.push_back("--rank=" + std::to_string(*identity.rank));
  if (identity.local_rank) words.push_back("--local-rank=" + std::to_string(*identity.local_rank));
  if (identity.node) words.push_back("--node=" + *identity.node);
  words.emplace_back("--");
  return shell_join(words) + " " + std::string(py_executable);
}

std::string nsel_plugin_setting() {
  return "[{\"class\": \"" + std::string(kNselPluginClass) + "\"}]";
}

std::string_view to_string(PluginSetting setting) {
  switch (setting) {
    case PluginSetting::loads_nsel:
      return "loads nsel's plugin";
    case PluginSetting::unset:
      return "unset";
    case PluginSetting::without_nsel:
      return "does not name nsel's plugin";
    case PluginSetting::malformed:
      return "not a JSON list of plugins";
  }
  return "unknown";
}

PluginSetting read_plugin_setting(const std::optional<std::string>& value) {
  if (!value || value->find_first_not_of(" \t\r\n") == std::string::npos) {
    return PluginSetting::unset;
  }
  // Ray's own reading: json.loads, then a list of objects, each with a "class" (a string).
  const nlohmann::json parsed = nlohmann::json::parse(*value, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_array()) return PluginSetting::malformed;
  bool names_nsel = false;
  for (const nlohmann::json& entry : parsed) {
    if (!entry.is_object()) return PluginSetting::malformed;
    const auto found = entry.find("class");
    if (found == entry.end() || !found->is_string()) return PluginSetting::malformed;
    if (found->get<std::string>() == kNselPluginClass) names_nsel = true;
  }
  return names_nsel ? PluginSetting::loads_nsel : PluginSetting::without_nsel;
}

bool started_by_raylet(const EnvLookup& environment) {
  return !environment("RAY_RAYLET_PID").value_or("").empty();
}

AtImportFix decide_at_import_fix(const EnvLookup& environment) {
  // Read first: a bad value is an error wherever nsel is imported.
  const std::optional<std::string> switch_text = environment(kAtImportFixVariable);
  const bool allowed =
      !switch_text || switch_text->empty() || parse_switch(*switch_text, kAtImportFixVariable);
  if (environment(kWorkerPatternsVariable).value_or("").find_first_not_of(" \t") ==
      std::string::npos) {
    return {false, std::string(kWorkerPatternsVariable) + " is not set"};
  }
  if (!allowed) return {false, std::string(kAtImportFixVariable) + "=" + *switch_text};
  if (started_by_raylet(environment)) {
    return {false, "this is a process Ray started (RAY_RAYLET_PID is set), not a driver"};
  }
  if (read_plugin_setting(environment(kRayPluginsVariable)) == PluginSetting::loads_nsel) {
    return {false, std::string(kRayPluginsVariable) +
                       " loads nsel's plugin, which keeps the worker's interpreter itself"};
  }
  return {true, ""};
}

}  // namespace nsel
