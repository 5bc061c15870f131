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

#include "nsel/sys/process.hpp"

namespace nsel::cli {

using Action = std::function<int(const std::vector<std::string>& trailing)>;

Action add_plan(CLI::App& app);
Action add_exec(CLI::App& app);
Action add_demo(CLI::App& app);
Action add_report(CLI::App& app);
Action add_ls(CLI::App& app);
Action add_check(CLI::App& app);
Action add_recover(CLI::App& app);
Action add_sync(CLI::App& app);

Action add_ray(CLI::App& app);
Action add_doctor(CLI::App& app);

}  // namespace nsel::cli
