// One registration function per subcommand; each returns the action main runs once parsing
// succeeded. `trailing` holds what followed the first "--" (PROGRAM ARGS...).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/sys/process.hpp"

namespace nsel::cli {

using Action = std::function<int(const std::vector<std::string>& trailing)>;

Action add_plan(CLI::App& app);
Action add_exec(CLI::App& app);
Action add_demo(CLI::App& app);
Action add_report(CLI::App& app);
Action add_diff(CLI::App& app);
Action add_ls(CLI::App& app);
Action add_check(CLI::App& app);
Action add_recover(CLI::App& app);
Action add_sync(CLI::App& app);

Action add_ray(CLI::App& app);
Action add_doctor(CLI::App& app);

// Shared by the tables nsel ls and nsel check print: an empty cell shows as "-", and the
// folders searched as one comma-separated list.
inline std::string cell(const std::string& text) {
  return text.empty() ? "-" : text;
}
inline std::string joined_paths(const std::vector<std::filesystem::path>& paths) {
  std::string out;
  for (const std::filesystem::path& p : paths) out += (out.empty() ? "" : ", ") + p.string();
  return out;
}

}  // namespace nsel::cli
