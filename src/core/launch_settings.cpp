#include "nsel/core/launch_settings.hpp"

namespace nsel {
LaunchSettings LaunchSettings::from_environment(const EnvLookup& lookup) {
  LaunchSettings settings;
  if (auto value = lookup(kStopTimeoutVariable); value && !value->empty()) {
    settings.stop_timeout = parse_seconds(*value, kStopTimeoutVariable);
  }
  if (auto value = lookup(kAllowUnprofiledVariable); value && !value->empty()) {
    settings.allow_unprofiled = parse_switch(*value, kAllowUnprofiledVariable);
  }
  return settings;
}

}  // namespace nsel
