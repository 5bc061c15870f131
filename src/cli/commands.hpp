// One registration function per subcommand; each returns the action main runs once parsing
// succeeded. `trailing` holds what followed the first "--" (PROGRAM ARGS...).
#pragma once

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/core/terminal_text.hpp"
#include "nsel/core/values.hpp"
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

// Flushes standard output where a command wants its lines out at once (one per worker, per
// pass); a failure is nsel::Error (exit 1) naming standard output, as main's final check says.
inline void flush_standard_output() {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int error = errno;
    std::clearerr(stdout);  // told here: main's final check stays silent
    errno = error;
    throw Error(std::string("cannot write to standard output: ") +
                    (errno != 0 ? std::strerror(errno) : "a write failed"),
                1);
  }
}

// A name (a report, an error message about it) as the terminal shows it in a progress or error
// line on stderr: control characters escaped, cut at 512 bytes (nsel/core/terminal_text.hpp).
// Standard output's lines are the render room's.
inline std::string shown(const std::string& text) {
  return terminal_text(text, kNameCutBytes);
}

// A line a workflow tells (a notice, a step of the demo, exec's log line) on stderr, at once (a
// line told before this process is replaced must be out): control characters escaped, as
// terminal_text does, so that no name inside it drives the terminal or forges a line. Text
// already made safe by quote() passes unchanged.
inline void tell_line(const std::string& line) {
  std::fprintf(stderr, "%s\n", terminal_text(line).c_str());
  std::fflush(stderr);
}

// The ROOT... arguments of ls, check and recover: each an existing folder (one line, exit code
// 2, otherwise).
inline std::vector<std::filesystem::path> report_roots(const std::vector<std::string>& given) {
  std::vector<std::filesystem::path> roots;
  for (const std::string& root : given) {
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec)) {
      throw Error(bad_value("ROOT", root, "no such folder",
                            "a folder holding reports: a Ray temp folder such as /tmp/ray, a "
                            "SLURM log folder, or any folder"));
    }
    roots.emplace_back(root);
  }
  return roots;
}

}  // namespace nsel::cli
