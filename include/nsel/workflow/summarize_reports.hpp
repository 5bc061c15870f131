// `nsel report`'s pipeline: the reports under some paths, each exported once (cached) and
// summarised in parallel, compared across workers, and written as CSV tables and an HTML page.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/analyze/render.hpp"
#include "nsel/analyze/summary.hpp"
#include "nsel/core/settings.hpp"

namespace nsel {

struct ReportRequest {
  std::vector<std::filesystem::path> paths;  // reports, exports or folders; empty: /tmp/ray
  SummaryOptions summary;                    // its threads are set here, from `jobs`
  unsigned jobs = 0;                         // reports read at once; 0: one per CPU
  double straggler_percent = 10;
  std::filesystem::path cache_dir;  // empty: default_export_cache_dir from the environment
  std::filesystem::path csv_dir;    // empty: no CSV tables
  std::filesystem::path html_file;  // empty: no HTML page
  EnvLookup environment;            // NSEL_NSYS and PATH (for nsys), XDG_CACHE_HOME, HOME
};

// What the pipeline tells as it goes; each may be empty.
struct ReportProgress {
  std::function<void(std::size_t reports)> found;  // before any is read
  // Just before nsys exports a report, and once a report is read (or failed): from several
  // threads at once.
  std::function<void(const std::filesystem::path& report)> exporting;
  std::function<void(const std::filesystem::path& report)> read;
  std::function<void()> all_read;
  // After all_read, one per unreadable report, in the reports' order.
  std::function<void(const ReportFailure& failure)> failed;
  std::function<void(const std::filesystem::path& dir)> wrote_csv;
  std::function<void(const std::filesystem::path& file)> wrote_html;
};

// Throws nsel::Error with exit code 1 when no report is found, or when one needs nsys and nsys
// is not on PATH (exit code 2 for a path that does not exist). A report that cannot be read is
// a failure in the set, the others are still summarised. Processes are sorted by label.
ReportSet summarize_reports(const ReportRequest& request, const ReportProgress& progress);

}  // namespace nsel
