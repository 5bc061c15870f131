// Profiling settings read from the environment (the compatibility contract's variables and
// nsel's own), validated as a whole so that a bad value stops the job before anything starts.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/capture.hpp"
#include "nsel/core/pattern.hpp"
#include "nsel/core/rank_selection.hpp"
#include "nsel/core/step_window.hpp"

namespace nsel {

inline constexpr std::string_view kWorkerPatternsVariable = "NRL_NSYS_WORKER_PATTERNS";

// Looks a variable up; nullopt when unset. Keeps `core` free of the process environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

struct ProfileSettings {
  // Both set (profiling on) or both empty (off); an empty value counts as unset.
  std::optional<PatternList> patterns;
  std::optional<StepWindow> window;          // the first of `windows`
  std::vector<StepWindow> windows;           // every window, in order: "2:4,10:12" gives two
  std::optional<std::string> extra_options;  // raw JSON, already validated
  CaptureMode capture = CaptureMode::automatic;
  // Narrow the selection of matched workers; absent means every rank, local rank and node.
  std::optional<RankList> ranks;        // NSEL_PROFILE_RANKS
  std::optional<RankList> local_ranks;  // NSEL_PROFILE_LOCAL_RANKS
  std::optional<PatternList> nodes;     // NSEL_PROFILE_NODES

  bool enabled() const { return patterns.has_value() && window.has_value(); }

  // Reads NRL_NSYS_WORKER_PATTERNS, NRL_NSYS_PROFILE_STEP_RANGE, NRL_NSYS_EXTRA_OPTIONS,
  // NSEL_CAPTURE, NSEL_PROFILE_RANKS, NSEL_PROFILE_LOCAL_RANKS and NSEL_PROFILE_NODES. Throws
  // nsel::Error on any bad value, when only one of the first two is set, or when a filter is set
  // without them.
  static ProfileSettings from_environment(const EnvLookup& lookup);
};

}  // namespace nsel
