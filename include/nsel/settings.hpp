// Profiling settings read from the environment (the compatibility contract's variables and
// nsel's own), validated as a whole so that a bad value stops the job before anything starts.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "nsel/capture.hpp"
#include "nsel/pattern.hpp"
#include "nsel/step_window.hpp"

namespace nsel {

inline constexpr std::string_view kWorkerPatternsVariable = "NRL_NSYS_WORKER_PATTERNS";

// Looks a variable up; nullopt when unset. Keeps `core` free of the process environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

struct ProfileSettings {
  // Both set (profiling on) or both empty (off); an empty value counts as unset.
  std::optional<PatternList> patterns;
  std::optional<StepWindow> window;
  std::optional<std::string> extra_options;  // raw JSON, already validated
  CaptureMode capture = CaptureMode::automatic;

  bool enabled() const { return patterns.has_value() && window.has_value(); }

  // Reads NRL_NSYS_WORKER_PATTERNS, NRL_NSYS_PROFILE_STEP_RANGE, NRL_NSYS_EXTRA_OPTIONS and
  // NSEL_CAPTURE. Throws nsel::Error on any bad value, or when only one of the first two is set.
  static ProfileSettings from_environment(const EnvLookup& lookup);
};

}  // namespace nsel
