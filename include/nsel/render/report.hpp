// The outputs of `nsel report`: a terminal table, JSON, CSV files and a self-contained HTML
// page (an SVG timeline of steps per worker, aligned on step boundaries, and the tables).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nsel/analyze/report_set.hpp"
#include "nsel/sys/files.hpp"

namespace nsel {

// The JSON document's "schema": bumped when a field changes meaning or goes away.
inline constexpr const char* kReportJsonSchema = "nsel.report/1";

std::string render_text(const ReportSet& set);
nlohmann::json render_json(const ReportSet& set);
// What `nsel report --json` prints: render_json's document with "schema" first, the other keys
// in their sorted order.
nlohmann::ordered_json render_report_document(const ReportSet& set);
std::string render_html(const ReportSet& set);
// The page written under a temporary name and renamed.
void write_report_html(const ReportSet& set, const std::filesystem::path& file);

// Writes processes.csv, steps.csv, step_by_worker.csv, stragglers.csv, step_ranges.csv,
// nvtx.csv, kernels.csv, communication_wait.csv, osrt.csv and failures.csv into `dir` (created).
// Each file is written under a temporary name and renamed. Returns the files written.
std::vector<std::filesystem::path> write_csv(const ReportSet& set,
                                             const std::filesystem::path& dir);

}  // namespace nsel
