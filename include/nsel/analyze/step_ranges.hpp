// Reading the training steps a report holds from its SQLite export (nsys export --type sqlite).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nsel {

struct StepRange {
  long long step = 0;
  long long start_ns = 0;
  long long end_ns = 0;
};

// The NVTX ranges named exactly "step <n>", in time order. A missing NVTX table means no steps.
// Throws nsel::Error (exit code 1) when the file is not a readable SQLite export.
std::vector<StepRange> read_step_ranges(const std::filesystem::path& sqlite_export);

// Whether the export holds any NVTX event at all: one that lost its NVTX data has none.
// Throws nsel::Error (exit code 1) when the file is not a readable SQLite export.
bool export_has_nvtx(const std::filesystem::path& sqlite_export);

// "2-3 (2 steps)", "5 (1 step)", "none".
std::string describe_steps(const std::vector<StepRange>& steps);

}  // namespace nsel
