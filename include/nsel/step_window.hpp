// The window of training steps to capture: NRL_NSYS_PROFILE_STEP_RANGE.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace nsel
