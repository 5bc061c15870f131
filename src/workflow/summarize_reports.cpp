#include "nsel/workflow/summarize_reports.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "nsel/analyze/comparison.hpp"
#include "nsel/analyze/exports.hpp"
#include "nsel/analyze/step_ranges.hpp"
#include "nsel/core/error.hpp"
#include "nsel/reports/report_files.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/nsys_installs.hpp"
#include "nsel/sys/process.hpp"
#include "nsel/workflow/check_run.hpp"

namespace nsel {

namespace fs = std::filesystem;

ReportSet summarize_reports(const ReportRequest& request, const ReportProgress& progress) {
  std::vector<fs::path> roots = request.paths;
  if (roots.empty()) roots.emplace_back("/tmp/ray");
  std::vector<UnreadableFolder> unreadable;
  const std::vector<fs::path> reports = find_report_files(roots, "PATH", &unreadable);
  if (reports.empty()) {
    std::string where;
    for (const fs::path& r : roots) where += (where.empty() ? "" : ", ") + quote(r.string());
    for (const UnreadableFolder& u : unreadable) {
      where += "; cannot read " + quote(u.folder.string()) + ": " + u.problem;
    }
    throw Error("no reports (.nsys-rep) or exports (.sqlite) found under " + where, 1);
  }

  ExportSettings export_settings;
  const bool needs_nsys = std::any_of(reports.begin(), reports.end(),
                                      [](const fs::path& r) { return r.extension() != ".sqlite"; });
  if (needs_nsys) {
    // Every install is asked its version once, here, before the threads; each report is then
    // exported with the one that can read it.
    export_settings = export_settings_from(request.environment, request.cache_dir);
    if (export_settings.installs.empty()) {
      throw Error(
          "no nsys found (on PATH or in the known install folders): it is needed to "
          "export " +
              quote(reports.front().string()) +
              "; install Nsight Systems (or set NSEL_NSYS), or pass .sqlite exports",
          1);
    }
  }
  // SIGTERM or SIGINT while nsys exports: its children are ended and their temporary files
  // removed, and nsel exits with 128 + the signal.
  std::optional<StopCleanup> stop_cleanup;
  if (needs_nsys) stop_cleanup.emplace();
  if (progress.found) progress.found(reports.size());
  export_settings.exporting = progress.exporting;
  export_settings.nsys_output = progress.nsys_output;

  std::vector<std::optional<ProcessSummary>> summaries(reports.size());
  std::vector<std::optional<std::string>> errors(reports.size());
  const unsigned cpus =
      std::max(1u, request.jobs ? request.jobs : std::thread::hardware_concurrency());
  const unsigned jobs = std::min<unsigned>(cpus, static_cast<unsigned>(reports.size()));
  SummaryOptions summary_options = request.summary;
  // CPUs left over when there are fewer reports than CPUs read a report's NVTX table in parts.
  summary_options.threads = std::max(1u, cpus / jobs);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < reports.size(); i = next++) {
      const fs::path& report = reports[i];
      try {
        const ExportResult export_file = ensure_export(report, export_settings);
        ProcessSummary summary = summarize_export(export_file.file, summary_options);
        // A stop signal: nsys closed at teardown the step the program was in (cut, not a step).
        if (stopped_by_signal(report)) {
          mark_cut_steps(summary.steps, read_step_ranges(export_file.file, true));
        }
        summary.notes = export_file.notes;
        summary.identity = identify_report(report);
        summary.report = report;
        summaries[i] = std::move(summary);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
      if (progress.read) progress.read(report);
    }
  };

  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  if (progress.all_read) progress.all_read();

  ReportSet set;
  // A folder that could not be read may hold reports: told as a failure, never passed over.
  for (const UnreadableFolder& u : unreadable) {
    set.failures.push_back({u.folder, "cannot read the folder " + quote(u.folder.string()) + ": " +
                                          u.problem + "; any reports in it are not counted"});
    if (progress.failed) progress.failed(set.failures.back());
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (summaries[i]) set.processes.push_back(std::move(*summaries[i]));
    if (errors[i]) {
      // One failure per unreadable report, in the reports' order, whatever finished first.
      set.failures.push_back({reports[i], *errors[i]});
      if (progress.failed) progress.failed(set.failures.back());
    }
  }
  std::stable_sort(set.processes.begin(), set.processes.end(),
                   [](const ProcessSummary& a, const ProcessSummary& b) {
                     return a.identity.label() < b.identity.label();
                   });
  set.comparison = compare_steps(set.processes, request.straggler_percent);
  set.run = describe_run(set.processes);

  return set;
}

}  // namespace nsel
