// `nsel report`'s pipeline: the reports under some paths, each exported once (cached) and
// summarised in parallel and compared across workers. Its CSV tables and HTML page are drawn by
// the render room (nsel/render/report.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/analyze/report_set.hpp"
#include "nsel/analyze/summary.hpp"
#include "nsel/core/settings.hpp"

namespace nsel {

struct ReportRequest {
  std::vector<std::filesystem::path> paths;  // reports, exports or folders; empty: /tmp/ray
  SummaryOptions summary;                    // its threads are set here, from `jobs`
  unsigned jobs = 0;                         // reports read at once; 0: one per CPU
  double straggler_percent = 10;
  std::filesystem::path cache_dir;  // empty: default_export_cache_dir from the environment
  EnvLookup environment;            // NSEL_NSYS and PATH (for nsys), XDG_CACHE_HOME, HOME
};

// What the pipeline tells as it goes; each may be empty.
struct ReportProgress {
  std::function<void(std::size_t reports)> found;  // before any is read
  // Just before nsys exports a report, and once a report is read (or failed): from several
  // threads at once.
  std::function<void(const std::filesystem::path& report)> exporting;
  std::function<void(const std::filesystem::path& report)> read;
  // nsys's own output of each export it ran (ExportSettings::nsys_output), from several threads.
  std::function<void(const std::filesystem::path& report, const std::string& nsys_output)>
      nsys_output;
  std::function<void()> all_read;
  // After all_read, one per unreadable report, in the reports' order.
  std::function<void(const ReportFailure& failure)> failed;
};

// Throws nsel::Error with exit code 1 when no report is found, or when one needs nsys and nsys
// is not on PATH (exit code 2 for a path that does not exist). A report that cannot be read is
// a failure in the set, the others are still summarised. Processes are sorted by label.
ReportSet summarize_reports(const ReportRequest& request, const ReportProgress& progress);

}  // namespace nsel
