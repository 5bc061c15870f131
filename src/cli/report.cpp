// nsel report: summarise many reports at once (per step, per worker, across workers).
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>

#include "cli/commands.hpp"
#include "cli/report_progress.hpp"
#include "nsel/analyze/summary.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/values.hpp"
#include "nsel/render/json_text.hpp"
#include "nsel/render/report.hpp"
#include "nsel/sys/process.hpp"
#include "nsel/workflow/summarize_reports.hpp"

namespace nsel::cli {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::vector<std::string> paths;
  bool json = false;
  std::string csv_dir;
  std::string html_file;
  std::string step_name = "step {n}";
  std::string straggler_percent = "10";
  std::string top_kernels = "10";
  std::string jobs;  // empty: one per CPU
  std::string cache_dir;
  bool quiet = false;
  bool verbose = false;
  bool short_kernel_names = false;
};

double parse_percent(const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    throw Error(bad_value(
        "--straggler-percent", text, "not a percentage",
        "a number >= 0, for example 10 (10 % above the median of the other workers' step time)"));
  }
  return value;
}

int run_report(const ReportOptions& options) {
  ReportRequest request;
  request.summary = {
      StepNamePattern(options.step_name, "--step-name"),
      static_cast<std::size_t>(parse_whole_number(options.top_kernels, "--top", 0, 1'000'000))};
  request.summary.short_kernel_names = options.short_kernel_names;
  request.jobs = options.jobs.empty()
                     ? 0u
                     : static_cast<unsigned>(parse_whole_number(options.jobs, "--jobs", 1, 1024));
  request.straggler_percent = parse_percent(options.straggler_percent);
  for (const std::string& p : options.paths) request.paths.emplace_back(p);
  request.cache_dir = options.cache_dir;
  request.environment = environment_variable;

  std::optional<ReportsProgress> progress;
  ReportProgress told = reading_progress(
      progress, [] { return std::string("nsel report"); }, options.quiet, options.verbose);
  const ReportSet set = summarize_reports(request, told);
  if (!options.csv_dir.empty()) {
    write_csv(set, options.csv_dir);
    if (!options.quiet)
      std::fprintf(stderr, "nsel report: wrote CSV files to %s\n", options.csv_dir.c_str());
  }
  if (!options.html_file.empty()) {
    write_report_html(set, options.html_file);
    if (!options.quiet) std::fprintf(stderr, "nsel report: wrote %s\n", options.html_file.c_str());
  }
  if (options.json) {
    std::printf("%s\n", json_text(render_report_document(set), JsonLayout::document).c_str());
  } else {
    std::fputs(render_text(set).c_str(), stdout);
  }
  return set.failures.empty() ? 0 : 1;
}

}  // namespace

Action add_report(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Summarise many reports at once: per process, per step, across workers.\n\n"
      "Takes reports (.nsys-rep), SQLite exports (.sqlite) and folders (searched recursively;\n"
      "default /tmp/ray). Each report is exported once with 'nsys export --type sqlite', by an\n"
      "installed nsys that can read it (chosen by the version that wrote it; "
      "NSEL_NSYS=PATH[:PATH]\n"
      "names the installs to use, else PATH's nsys and the known install folders); the export\n"
      "is kept beside it (or in --cache-dir when that folder may not be written) and made again\n"
      "when the report is newer or it is not complete. Reports are read in parallel.\n\n"
      "Per process: identity (worker, rank, node, PID, window from the manifest 'nsel exec'\n"
      "wrote beside the report, <stem>.nsel.json, or the file name), the\n"
      "duration of every step (NVTX ranges named by --step-name), the NVTX range summary with\n"
      "the columns of 'nsys stats -r nvtxppsum', top CUDA kernels (one row per full name, grid\n"
      "and block, as 'nsys stats -r gpukernsum') and, per step, GPU busy, idle, communication\n"
      "(NCCL and the like) and compute time when the report has GPU data, and the OS runtime\n"
      "summary. Across processes: step time by worker, the slowest worker per step,\n"
      "stragglers, the time each worker waited in communication kernels per step, and the\n"
      "share of each step spent in each top-level NVTX range.\n\n"
      "Exit code 0; 1 when a report could not be read (the others are still summarised);\n"
      "2 for bad options.\n\n"
      "Examples:\n"
      "  nsel report /tmp/ray/session_latest/logs/nsight\n"
      "  nsel report run1/ --html run1.html --csv run1-csv\n"
      "  nsel report --json a.nsys-rep b.nsys-rep | jq '.steps'");
  sub->add_option("PATH", options->paths, "reports, exports or folders (default /tmp/ray)");
  sub->add_flag(
      "--json", options->json,
      std::string("print one JSON document (schema ") + kReportJsonSchema + ") instead of tables");
  sub->add_option("--csv", options->csv_dir, "also write CSV tables into this folder")
      ->type_name("DIR");
  sub->add_option("--html", options->html_file,
                  "also write a self-contained HTML page (timeline and tables)")
      ->type_name("FILE");
  sub->add_option("--step-name", options->step_name,
                  "NVTX range name of a step, {n} standing for its number")
      ->capture_default_str()
      ->type_name("PATTERN");
  sub->add_option("--straggler-percent", options->straggler_percent,
                  "a step time this many percent above the median of the other workers' marks "
                  "a straggler")
      ->capture_default_str()
      ->type_name("P");
  sub->add_option("--top", options->top_kernels, "CUDA kernels listed per process")
      ->capture_default_str()
      ->type_name("N");
  sub->add_flag("--short-kernel-names", options->short_kernel_names,
                "group kernels by their short name (and grid, block) rather than the full "
                "demangled name, as 'nsys stats -r gpukernsum:base'");
  sub->add_option(
         "-j,--jobs", options->jobs,
         "reports read at once (default: one per CPU); with fewer reports than that, each is "
         "read in parts at once")
      ->type_name("N");
  sub->add_option("--cache-dir", options->cache_dir,
                  "where exports go when a report's folder is read-only (default "
                  "$XDG_CACHE_HOME/nsel/exports or ~/.cache/nsel/exports)")
      ->type_name("DIR");
  sub->add_flag("-q,--quiet", options->quiet, "no progress on stderr");
  sub->add_flag("-v,--verbose", options->verbose,
                "show nsys's own output of each export it runs (without: kept in "
                "<report>.nsys-export.log when nsys fails)");
  return [options](const std::vector<std::string>&) { return run_report(*options); };
}

}  // namespace nsel::cli
