// One report per step window from one nsys session: naming nsys's numbered reports after their
// windows once nsys has exited.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/plan.hpp"
#include "nsel/core/step_window.hpp"

namespace nsel {

struct WindowReport {
  StepWindow window;
  long long pid = 0;                          // the profiled program's process id
  std::optional<std::filesystem::path> path;  // where it is now; absent when none was written
};

struct WindowReports {
  std::vector<WindowReport> reports;  // one per window (and per process found), in order
  std::vector<std::string> messages;  // lines for stderr: where each went, windows not reached
};

// What a numbered report's file name tells: <stem><PID><tag>.<k>.nsys-rep.
struct NumberedReport {
  long long pid = 0;
  std::size_t capture = 0;  // k, from 1
};
std::optional<NumberedReport> parse_numbered_report(std::string_view file_name,
                                                    const RepeatedReports& layout);

// Renames each <directory>/<stem><PID><tag>.<k>.nsys-rep to <directory>/<worker>_<start>:<stop>_
// <PID>.nsys-rep for the k-th window (the contract's name), never over an existing file; a
// window with no numbered report was never reached (the program ended first). Call it after
// nsys has exited: Nsight Systems 2022.4 writes every numbered report only then.
WindowReports name_window_reports(const RepeatedReports& layout, std::string_view worker,
                                  const std::vector<StepWindow>& windows);

}  // namespace nsel
