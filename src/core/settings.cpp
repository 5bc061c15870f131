#include "nsel/core/settings.hpp"

#include <utility>

#include "nsel/core/error.hpp"
#include "nsel/core/nsys_options.hpp"

namespace nsel {
namespace {

std::optional<std::string> non_empty(const EnvLookup& lookup, std::string_view name) {
  std::optional<std::string> value = lookup(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

// The filters narrow a selection, so one without the selection itself is a mistake.
void read_filters(const EnvLookup& lookup, ProfileSettings& settings) {
  const auto ranks = non_empty(lookup, kRanksVariable);
  const auto local_ranks = non_empty(lookup, kLocalRanksVariable);
  const auto nodes = non_empty(lookup, kNodesVariable);
  if (ranks) settings.ranks = RankList::parse(*ranks, kRanksVariable);
  if (local_ranks) settings.local_ranks = RankList::parse(*local_ranks, kLocalRanksVariable);
  if (nodes) settings.nodes = PatternList::parse(*nodes);
  for (const auto& [name, value] :
       {std::pair{kRanksVariable, ranks}, std::pair{kLocalRanksVariable, local_ranks},
        std::pair{kNodesVariable, nodes}}) {
    if (value && !settings.enabled()) {
      throw Error(std::string(name) + "=" + quote(*value) + " narrows the workers selected by " +
                  std::string(kWorkerPatternsVariable) + " and " + std::string(kStepRangeVariable) +
                  ", which are not set; set them too (for example " +
                  std::string(kWorkerPatternsVariable) + "='*' " + std::string(kStepRangeVariable) +
                  "='2:4') or unset " + std::string(name));
    }
  }
  if (settings.nodes && settings.nodes->empty()) {
    throw Error(bad_value(kNodesVariable, *nodes, "no pattern in it",
                          "comma-separated host-name patterns, for example 'node0[0-3],gpu-*'"));
  }
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
  if (range) {
    settings.windows = parse_step_windows(*range, kStepRangeVariable);
    settings.window = settings.windows.front();
  }
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
  read_filters(lookup, settings);
  return settings;
}

}  // namespace nsel
