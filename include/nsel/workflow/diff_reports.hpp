// `nsel diff`'s pipeline: each run's reports summarised as `nsel report` does (the same exports,
// cached), the two compared (nsel/analyze/diff.hpp), and the CSV files and HTML page written.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

#include "nsel/analyze/diff.hpp"
#include "nsel/workflow/summarize_reports.hpp"

namespace nsel {

struct DiffRequest {
  // What `nsel report` takes, per run. Their csv_dir and html_file are not used; every kernel
  // is kept (the top cut is applied when printing), as a kernel may enter or leave the top.
  ReportRequest baseline;
  ReportRequest candidate;
  DiffOptions diff;
  std::filesystem::path csv_dir;    // empty: no CSV files
  std::filesystem::path html_file;  // empty: no HTML page
};

struct DiffProgress {
  // Before each run is summarised ("baseline", then "candidate"), and that run's own progress.
  std::function<void(std::string_view side)> summarising;
  ReportProgress side;
  std::function<void(const std::filesystem::path& dir)> wrote_csv;
  std::function<void(const std::filesystem::path& file)> wrote_html;
};

// Throws nsel::Error as summarize_reports does, the message naming the run ("baseline: no
// reports ... found under 'x'"). A report that cannot be read is a failure of its run, listed in
// the result; the others are still compared.
RunDiff diff_reports(const DiffRequest& request, const DiffProgress& progress);

}  // namespace nsel
