#include "nsel/core/ray_runtime_env.hpp"

#include "nsel/core/command_line.hpp"

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

}  // namespace nsel
