// The outputs of `nsel diff`: a terminal summary, versioned JSON, CSV files and a
// self-contained HTML page in the style of `nsel report`'s.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nsel/analyze/diff.hpp"

namespace nsel {

// The JSON document's "schema": bumped when a field changes meaning or goes away.
inline constexpr const char* kDiffJsonSchema = "nsel.diff/1";

// Readable on a 64-rank run: the verdict first, then the metrics, the out-of-line ranks (every
// rank only when there are few), the top kernels and ranges by change, and the unpaired ones.
std::string render_diff_text(const RunDiff& diff);

// The line --gate gives on stderr (`given`: PERCENT as the user wrote it): a regression's, or the
// error of a gate that saw no evidence; "" when it passed or was not asked.
std::string render_gate_line(const RunDiff& diff, const std::string& given);
nlohmann::json render_diff_json(const RunDiff& diff);
// What `nsel diff --json` prints: render_diff_json's document with "schema" moved first, the
// other keys in their sorted order.
nlohmann::ordered_json render_diff_document(const RunDiff& diff);
std::string render_diff_html(const RunDiff& diff);
// The page written under a temporary name and renamed.
void write_diff_html(const RunDiff& diff, const std::filesystem::path& file);

// Writes diff_metrics.csv, diff_steps.csv, diff_ranks.csv, diff_kernels.csv, diff_nvtx.csv and
// diff_unpaired.csv into `dir` (created), each under a temporary name and renamed. Returns the
// files written.
std::vector<std::filesystem::path> write_diff_csv(const RunDiff& diff,
                                                  const std::filesystem::path& dir);

}  // namespace nsel
