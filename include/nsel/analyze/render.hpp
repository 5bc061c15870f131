// The outputs of `nsel report`: a terminal table, JSON, CSV files and a self-contained HTML
// page (an SVG timeline of steps per worker, aligned on step boundaries, and the tables).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nsel/analyze/comparison.hpp"
#include "nsel/analyze/summary.hpp"
#include "nsel/sys/files.hpp"

namespace nsel {

struct ReportFailure {
  std::filesystem::path report;
  std::string message;  // one line
};

struct ReportSet {
  std::vector<ProcessSummary> processes;  // sorted by label
  std::vector<ReportFailure> failures;
  StepComparison comparison;
};

std::string render_text(const ReportSet& set);
nlohmann::json render_json(const ReportSet& set);
std::string render_html(const ReportSet& set);

// Writes processes.csv, steps.csv, step_by_worker.csv, stragglers.csv, step_ranges.csv,
// nvtx.csv, kernels.csv, communication_wait.csv, osrt.csv and failures.csv into `dir` (created).
// Each file is written under a temporary name and renamed. Returns the files written.
std::vector<std::filesystem::path> write_csv(const ReportSet& set,
                                             const std::filesystem::path& dir);

}  // namespace nsel
