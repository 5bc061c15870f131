#include "nsel/settings.hpp"

#include "nsel/error.hpp"
#include "nsel/nsys_options.hpp"

namespace nsel {
namespace {

std::optional<std::string> non_empty(const EnvLookup& lookup, std::string_view name) {
  std::optional<std::string> value = lookup(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

}  // namespace

ProfileSettings ProfileSettings::from_environment(const EnvLookup& lookup) {
  ProfileSettings settings;
  const auto patterns = non_empty(lookup, kWorkerPatternsVariable);
  const auto range = non_empty(lookup, kStepRangeVariable);
  if (patterns && !range) {
    throw Error(std::string(kWorkerPatternsVariable) + "=" + quote(*patterns) + " is set but " +
                std::string(kStepRangeVariable) + " is not; set both (for example " +
                std::string(kStepRangeVariable) + "='2:4') or neither");
  }
  if (range && !patterns) {
    throw Error(std::string(kStepRangeVariable) + "=" + quote(*range) + " is set but " +
                std::string(kWorkerPatternsVariable) + " is not; set both (for example " +
                std::string(kWorkerPatternsVariable) + "='*policy*') or neither");
  }
  if (range) settings.window = parse_step_window(*range, kStepRangeVariable);
  if (patterns) {
    settings.patterns = PatternList::parse(*patterns);
    if (settings.patterns->empty()) {
      throw Error(bad_value(kWorkerPatternsVariable, *patterns,
                            "no pattern in it (blank pieces are dropped)",
                            "comma-separated patterns such as '*policy*,*vllm*'"));
    }
  }
  if (auto extra = non_empty(lookup, kExtraOptionsVariable)) {
    NsysOptions probe;  // validates now: a bad value must stop every worker, selected or not
    probe.merge_json(*extra, kExtraOptionsVariable);
    settings.extra_options = std::move(extra);
  }
  if (auto capture = non_empty(lookup, kCaptureVariable)) {
    settings.capture = parse_capture_mode(*capture, kCaptureVariable);
  }
  return settings;
}

}  // namespace nsel
