// How `nsel exec` launches a selected worker: nsel's own variables, read and validated before
// anything starts (a bad value stops every worker, selected or not).
#pragma once

#include <chrono>
#include <string_view>

#include "nsel/core/settings.hpp"
#include "nsel/core/values.hpp"

namespace nsel {

// Seconds nsys may take to finish a report once the program has ended or been asked to stop.
inline constexpr std::string_view kStopTimeoutVariable = "NSEL_STOP_TIMEOUT";
// 1: a selected worker whose node has no usable nsys runs unprofiled instead of failing.
inline constexpr std::string_view kAllowUnprofiledVariable = "NSEL_ALLOW_UNPROFILED";

struct LaunchSettings {
  std::chrono::milliseconds stop_timeout{std::chrono::seconds(60)};
  bool allow_unprofiled = false;

  // Reads NSEL_STOP_TIMEOUT and NSEL_ALLOW_UNPROFILED; throws nsel::Error on a bad value.
  static LaunchSettings from_environment(const EnvLookup& lookup);
};

}  // namespace nsel
