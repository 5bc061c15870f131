// How the terminal and the page name a process and state the straggler verdict: one text for
// `nsel report`, its page and `nsel demo`, so that they never read differently on one run.
// Unescaped: the terminal escapes it (terminal_text), the page as HTML.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nsel/analyze/comparison.hpp"
#include "nsel/analyze/report_set.hpp"
#include "nsel/analyze/summary.hpp"
#include "render/number_text.hpp"

namespace nsel::render_detail {

// "dtensor_policy_worker rank 1 (pid 24661)": its worker, its rank and its process id, each
// when known.
inline std::string process_name(const ReportIdentity& id) {
  std::string name = id.worker;
  if (id.rank) name += " rank " + std::to_string(*id.rank);
  if (id.pid != 0) name += " (pid " + std::to_string(id.pid) + ")";
  return name;
}

// What a process's work in a step is: "step time", or "step time less its communication ranges
// (all-reduce)" where the steps have such ranges.
inline std::string work_text(const StepComparison& comparison) {
  if (comparison.communication_ranges.empty()) return "step time";
  std::string ranges;
  for (const std::string& range : comparison.communication_ranges) {
    ranges += (ranges.empty() ? "" : ", ") + range;
  }
  return "step time less its communication ranges (" + ranges + ")";
}

// "Stragglers (more than 10.0 % above the median of the other workers' step time)".
inline std::string stragglers_heading(const StepComparison& comparison) {
  return "Stragglers (more than " + render_detail::percent_text(comparison.straggler_percent) +
         " above the median of the other workers' " + work_text(comparison) + ")";
}

// The run's straggler in one sentence, without its name: ": its step time is above ... in 2 of
// 2 steps, by 49.1 % on average" (the caller puts the name, escaped as its output needs, first).
inline std::string straggler_finding(const StepComparison& comparison,
                                     const RunStraggler& straggler) {
  std::string text =
      ": its " + work_text(comparison) + " is above the median of the other workers' in " +
      std::to_string(straggler.slow_steps) + " of " + std::to_string(straggler.steps) +
      " steps, by " + render_detail::percent_text(straggler.mean_percent_above_others) +
      " on average";
  if (!comparison.communication_ranges.empty()) text += "; the others wait for it";
  return text;
}

// "none (no worker more than 10.0 % above the median of the other workers')".
inline std::string no_straggler_text(const StepComparison& comparison) {
  return "none (no worker more than " + render_detail::percent_text(comparison.straggler_percent) +
         " above the median of the other workers')";
}

// The run's straggler as `nsel report --json` and `nsel demo --json` give it (its percent rounded
// to 0.1), or null.
inline nlohmann::json straggler_json(const ReportSet& set) {
  if (!set.comparison.straggler) return nullptr;
  const RunStraggler& straggler = *set.comparison.straggler;
  const ReportIdentity& id = set.processes[straggler.process].identity;
  return {{"label", id.label()},
          {"worker", id.worker},
          {"rank", id.rank ? nlohmann::json(*id.rank) : nlohmann::json(nullptr)},
          {"pid", id.pid},
          {"slow_steps", straggler.slow_steps},
          {"steps", straggler.steps},
          {"mean_percent_above_others", round_like_sqlite(straggler.mean_percent_above_others, 1)}};
}

}  // namespace nsel::render_detail
