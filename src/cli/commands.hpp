// One registration function per subcommand; each returns the action main runs once parsing
// succeeded. `trailing` holds what followed the first "--" (PROGRAM ARGS...).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nsel::cli {

using Action = std::function<int(const std::vector<std::string>& trailing)>;

Action add_plan(CLI::App& app);
Action add_exec(CLI::App& app);
Action add_demo(CLI::App& app);
Action add_report(CLI::App& app);
Action add_ls(CLI::App& app);
Action add_recover(CLI::App& app);
Action add_sync(CLI::App& app);

// "812 B", "126.6 KiB", "2.0 GiB".
std::string size_text(std::uintmax_t bytes);
Action add_ray(CLI::App& app);
Action add_doctor(CLI::App& app);

// The process environment, for ProfileSettings::from_environment.
std::optional<std::string> environment(std::string_view name);

// nsys on PATH (absolute), or nullopt.
std::optional<std::string> find_nsys();

// This executable's own path, from /proc/self/exe.
std::string self_executable();

}  // namespace nsel::cli
