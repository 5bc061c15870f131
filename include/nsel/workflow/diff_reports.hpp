// `nsel diff`'s pipeline: each run's reports summarised as `nsel report` does (the same exports,
// cached) and the two compared (nsel/analyze/diff.hpp). Its outputs are drawn by the render room
// (nsel/render/diff.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

#include "nsel/analyze/diff.hpp"
#include "nsel/workflow/summarize_reports.hpp"

namespace nsel {

struct DiffRequest {
  // What `nsel report` takes, per run. Every kernel
  // is kept (the top cut is applied when printing), as a kernel may enter or leave the top.
  ReportRequest baseline;
  ReportRequest candidate;
  DiffOptions diff;
};

struct DiffProgress {
  // Before each run is summarised ("baseline", then "candidate"), and that run's own progress.
  std::function<void(std::string_view side)> summarising;
  ReportProgress side;
};

// Throws nsel::Error as summarize_reports does, the message naming the run ("baseline: no
// reports ... found under 'x'"). A report that cannot be read is a failure of its run, listed in
// the result; the others are still compared.
RunDiff diff_reports(const DiffRequest& request, const DiffProgress& progress);

}  // namespace nsel
