#include "nsel/workflow/diff_reports.hpp"

#include <limits>
#include <string>

#include "nsel/core/error.hpp"
#include "nsel/sys/files.hpp"

namespace nsel {

namespace {

ReportSet summarise_side(std::string_view side, ReportRequest request,
                         const DiffProgress& progress) {
  request.summary.top_kernels = std::numeric_limits<std::size_t>::max();
  if (progress.summarising) progress.summarising(side);
  try {
    return summarize_reports(request, progress.side);
  } catch (const Error& e) {
    throw Error(std::string(side) + ": " + e.what(), e.exit_code());
  }
}

DiffSide side_of(const ReportRequest& request, const ReportSet& set) {
  DiffSide side;
  for (const auto& path : request.paths) side.paths.push_back(path.string());
  if (side.paths.empty()) side.paths.emplace_back("/tmp/ray");
  side.processes = set.processes.size();
  side.failures = set.failures;
  side.run = set.run;
  return side;
}

}  // namespace

RunDiff diff_reports(const DiffRequest& request, const DiffProgress& progress) {
  const ReportSet baseline = summarise_side("baseline", request.baseline, progress);
  const ReportSet candidate = summarise_side("candidate", request.candidate, progress);
  RunDiff diff = diff_runs(baseline, candidate, request.diff);
  diff.baseline = side_of(request.baseline, baseline);
  diff.candidate = side_of(request.candidate, candidate);
  return diff;
}

}  // namespace nsel
