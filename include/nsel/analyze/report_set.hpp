// What `nsel report` computes from a set of reports: one summary per readable report, one
// failure per report that could not be read, and the comparison of the steps across them.
// Drawing it is the render room's job (nsel/render/report.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "nsel/analyze/comparison.hpp"
#include "nsel/analyze/summary.hpp"

namespace nsel {

struct ReportFailure {
  std::filesystem::path report;
  std::string message;  // one line
};

// What run a set of reports shows, for the first line of every summary and page: each value
// distinct and sorted, empty where no report says (a report without a manifest has no pattern).
struct RunFacts {
  std::vector<std::string> sessions;       // Ray session folders
  std::vector<std::string> patterns;       // NRL_NSYS_WORKER_PATTERNS entries that selected
  std::vector<std::string> windows;        // step windows as written ("2:4")
  std::vector<std::string> nsys_versions;  // releases that wrote the reports
  std::string first_started;               // UTC, ISO 8601: the earliest nsys start
  std::string last_started;
  std::size_t processes = 0;
};

RunFacts describe_run(const std::vector<ProcessSummary>& processes);

struct ReportSet {
  std::vector<ProcessSummary> processes;  // sorted by label
  std::vector<ReportFailure> failures;
  StepComparison comparison;
  RunFacts run;  // describe_run(processes): the first line of every output of the set
};

}  // namespace nsel
