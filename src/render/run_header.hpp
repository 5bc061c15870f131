// The line that opens every summary and page: which run it shows (nsel/analyze/report_set.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nsel/analyze/report_set.hpp"
#include "nsel/core/terminal_text.hpp"

namespace nsel::render_detail {

// "a, b, c and 4 more": a 64-rank run's list stays one readable line.
inline std::string few_of(const std::vector<std::string>& values, std::size_t shown = 3) {
  std::string out;
  for (std::size_t i = 0; i < values.size() && i < shown; ++i) {
    out += (i == 0 ? "" : ", ") + terminal_text(values[i], kListItemCutBytes);
  }
  if (values.size() > shown) out += " and " + std::to_string(values.size() - shown) + " more";
  return out;
}

// "Run: session session_...; workers '*policy*'; steps 2:4; nsys 2023.4.4; started
// 2026-12-04T21:40:00.123Z" with only what the reports say; "Run: unknown (no manifest and no
// Ray session)" when they say nothing.
inline std::string run_header_text(const RunFacts& run) {
  std::vector<std::string> parts;
  if (!run.sessions.empty()) {
    parts.push_back((run.sessions.size() == 1 ? "session " : "sessions ") + few_of(run.sessions));
  }
  if (!run.patterns.empty()) {
    std::vector<std::string> quoted;
    for (const std::string& p : run.patterns) quoted.push_back("'" + p + "'");
    parts.push_back("workers " + few_of(quoted));
  }
  if (!run.windows.empty()) parts.push_back("steps " + few_of(run.windows));
  if (!run.nsys_versions.empty()) parts.push_back("nsys " + few_of(run.nsys_versions));
  if (!run.first_started.empty()) {
    parts.push_back("started " + terminal_text(run.first_started, kCellCutBytes) +
                    (run.last_started != run.first_started
                         ? " to " + terminal_text(run.last_started, kCellCutBytes)
                         : std::string()));
  }
  if (parts.empty()) return "Run: unknown (no manifest and no Ray session beside the reports)";
  std::string out = "Run:";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? " " : "; ") + parts[i];
  return out;
}

// The same facts in every JSON output that has them ("run"): lists, and null for no time.
inline nlohmann::json run_json(const RunFacts& run) {
  const auto time = [](const std::string& t) {
    return t.empty() ? nlohmann::json(nullptr) : nlohmann::json(t);
  };
  return {{"sessions", run.sessions},
          {"patterns", run.patterns},
          {"windows", run.windows},
          {"nsys_versions", run.nsys_versions},
          {"first_started", time(run.first_started)},
          {"last_started", time(run.last_started)}};
}

}  // namespace nsel::render_detail
