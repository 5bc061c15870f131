// The window of training steps to capture: NRL_NSYS_PROFILE_STEP_RANGE.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nsel {

inline constexpr std::string_view kStepRangeVariable = "NRL_NSYS_PROFILE_STEP_RANGE";

// Steps start <= step < stop, 1-based, like a Python slice.
struct StepWindow {
  long long start = 0;
  long long stop = 0;

  std::string text() const;  // "start:stop", as it appears in report names
  bool contains(long long step) const { return start <= step && step < stop; }
  bool operator==(const StepWindow&) const = default;
};

// Parses "start:stop" (whitespace around each number allowed). Throws nsel::Error naming
// `source`, quoting `value` and giving the expected form.
StepWindow parse_step_window(std::string_view value, std::string_view source = kStepRangeVariable);

// Parses one window or several separated by commas ("2:4,10:12"), increasing and not overlapping
// (a window may start at the previous one's stop). A value without a comma is exactly
// parse_step_window, errors included. Throws nsel::Error naming `source`.
std::vector<StepWindow> parse_step_windows(std::string_view value,
                                           std::string_view source = kStepRangeVariable);

// "2:4,10:12": the windows as the variable spells them.
std::string windows_text(const std::vector<StepWindow>& windows);

}  // namespace nsel
