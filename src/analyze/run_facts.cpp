#include <algorithm>
#include <set>

#include "nsel/analyze/report_set.hpp"

namespace nsel {

namespace {

std::vector<std::string> sorted_distinct(const std::set<std::string>& values) {
  return {values.begin(), values.end()};
}

}  // namespace

RunFacts describe_run(const std::vector<ProcessSummary>& processes) {
  RunFacts out;
  out.processes = processes.size();
  std::set<std::string> sessions, patterns, windows, versions;
  for (const ProcessSummary& process : processes) {
    const ReportIdentity& id = process.identity;
    if (!id.session.empty()) sessions.insert(id.session);
    if (!id.pattern.empty()) patterns.insert(id.pattern);
    if (!id.windows_text.empty()) {
      windows.insert(id.windows_text);
    } else if (id.window) {
      windows.insert(id.window->text());
    }
    if (!id.nsys_version.empty()) versions.insert(id.nsys_version);
    if (!id.started.empty()) {
      // ISO 8601 in UTC sorts as text.
      if (out.first_started.empty() || id.started < out.first_started) {
        out.first_started = id.started;
      }
      out.last_started = std::max(out.last_started, id.started);
    }
  }
  out.sessions = sorted_distinct(sessions);
  out.patterns = sorted_distinct(patterns);
  out.windows = sorted_distinct(windows);
  out.nsys_versions = sorted_distinct(versions);
  return out;
}

}  // namespace nsel
