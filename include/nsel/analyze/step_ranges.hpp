// Reading the training steps a report holds from its SQLite export (nsys export --type sqlite).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "nsel/analyze/summary.hpp"

namespace nsel {

struct StepRange {
  long long step = 0;
  long long start_ns = 0;
  long long end_ns = 0;
  // Cut by the end of capture, so not a whole step: never closed (end_ns is then the export's
  // last NVTX time), or, when the program was stopped by a signal, closed by nsys at teardown
  // (it ends with the capture's last NVTX event).
  bool cut = false;
};

// The NVTX ranges named exactly "step <n>", in time order, those cut marked. `stopped`: the
// program was stopped by a signal (its manifest's exit status), so nsys may have closed the step
// it was in. A missing NVTX table means no steps. Throws nsel::Error (exit code 1) when the file
// is not a readable SQLite export.
std::vector<StepRange> read_step_ranges(const std::filesystem::path& sqlite_export,
                                        bool stopped = false);

// Marks cut (StepSummary::cut) each summarised step that `ranges` (read_step_ranges of the same
// export) found cut, matched by step and start; a cut step's length is not the step's.
void mark_cut_steps(std::vector<StepSummary>& steps, const std::vector<StepRange>& ranges);

// Whether the export holds any NVTX event at all: one that lost its NVTX data has none.
// Throws nsel::Error (exit code 1) when the file is not a readable SQLite export.
bool export_has_nvtx(const std::filesystem::path& sqlite_export);

// "2-3 (2 steps)", "5 (1 step)", "none"; cut steps are named apart: "2-3 (2 steps), 4 cut".
std::string describe_steps(const std::vector<StepRange>& steps);

}  // namespace nsel
