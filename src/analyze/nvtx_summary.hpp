// The NVTX part of a summary: one pass over NVTX_EVENTS gives the NVTX range table, the steps
// and each step's top-level ranges.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "analyze/sqlite_db.hpp"
#include "nsel/analyze/summary.hpp"

namespace nsel::analyze {

struct NvtxSummary {
  std::vector<SummaryRow> rows;
  std::vector<StepSummary> steps;
};

// nullopt when the rows of `file`'s NVTX_EVENTS are not in start order (`sorted` false): read
// again with `sorted` true, which asks SQLite to sort them (and then never nullopt). Throws
// nsel::Error naming the file, table, column and value for a value of the wrong type or range.
std::optional<NvtxSummary> summarize_nvtx(const std::filesystem::path& file, const Database& db,
                                          const SummaryOptions& options, bool sorted);

}  // namespace nsel::analyze
