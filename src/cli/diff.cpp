// nsel diff: compare two runs across all their ranks.
#include <cstdio>
#include <filesystem>
#include <optional>

#include "cli/commands.hpp"
#include "cli/report_progress.hpp"
#include "nsel/analyze/diff.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/values.hpp"
#include "nsel/render/diff.hpp"
#include "nsel/render/json_text.hpp"
#include "nsel/workflow/diff_reports.hpp"

namespace nsel::cli {
namespace {

// Exit code when --gate finds the candidate slower: distinct from 1 (a report could not be
// read) and 2 (bad options), so that a CI job can tell a regression from a broken run.
constexpr int kGateExitCode = 3;

struct DiffCliOptions {
  std::vector<std::string> runs;  // BASELINE CANDIDATE
  std::vector<std::string> baseline_paths;
  std::vector<std::string> candidate_paths;
  bool json = false;
  std::string csv_dir;
  std::string html_file;
  std::string gate;
  std::string alpha = "0.01";
  std::string min_change = "1";
  std::string min_steps = "5";
  std::string pair_by = "worker,rank";
  std::string step_name = "step {n}";
  std::string jobs;
  std::string cache_dir;
  bool quiet = false;
  bool verbose = false;
  bool short_kernel_names = false;
};

// Which paths are each run: two positionals, or --baseline/--candidate (repeatable) for a run
// spread over several folders; not both.
void sides_of(const DiffCliOptions& options, ReportRequest& baseline, ReportRequest& candidate) {
  const bool named = !options.baseline_paths.empty() || !options.candidate_paths.empty();
  if (named) {
    if (!options.runs.empty()) {
      throw Error(bad_value("RUN", options.runs.front(),
                            "given together with --baseline/--candidate",
                            "either two positional paths or --baseline and --candidate"));
    }
    if (options.baseline_paths.empty() || options.candidate_paths.empty()) {
      const char* missing = options.baseline_paths.empty() ? "--baseline" : "--candidate";
      throw Error(std::string(missing) +
                  ": missing; expected both --baseline PATH and --candidate PATH (each may be "
                  "given several times)");
    }
    for (const std::string& p : options.baseline_paths) baseline.paths.emplace_back(p);
    for (const std::string& p : options.candidate_paths) candidate.paths.emplace_back(p);
    return;
  }
  if (options.runs.size() != 2) {
    throw Error("RUN: " + std::to_string(options.runs.size()) +
                " paths given; expected exactly two (a report, export or folder per run), or "
                "--baseline PATH and --candidate PATH");
  }
  baseline.paths.emplace_back(options.runs[0]);
  candidate.paths.emplace_back(options.runs[1]);
}

int run_diff(const DiffCliOptions& options) {
  DiffRequest request;
  sides_of(options, request.baseline, request.candidate);
  ReportRequest shared;
  // Every kernel is kept by diff_reports itself, whatever the summary's top says.
  shared.summary.step_name = StepNamePattern(options.step_name, "--step-name");
  shared.summary.short_kernel_names = options.short_kernel_names;
  shared.jobs = options.jobs.empty()
                    ? 0u
                    : static_cast<unsigned>(parse_whole_number(options.jobs, "--jobs", 1, 1024));
  shared.cache_dir = options.cache_dir;
  shared.environment = environment_variable;
  for (ReportRequest* side : {&request.baseline, &request.candidate}) {
    side->summary = shared.summary;
    side->jobs = shared.jobs;
    side->cache_dir = shared.cache_dir;
    side->environment = shared.environment;
  }
  request.diff.alpha = parse_decimal(options.alpha, "--alpha", 1e-9, 0.5,
                                     "a significance level above 0 and at most 0.5, e.g. 0.01");
  request.diff.min_change_percent =
      parse_decimal(options.min_change, "--min-change", 0, 1e6,
                    "a percentage >= 0, e.g. 1 (smaller changes are 'unchanged')");
  request.diff.min_steps =
      static_cast<std::size_t>(parse_whole_number(options.min_steps, "--min-steps", 2, 1'000'000));
  request.diff.pairing = parse_pairing_rule(options.pair_by, "--pair-by");
  if (!options.gate.empty()) {
    request.diff.gate_percent =
        parse_decimal(options.gate, "--gate", 0, 1e6,
                      "a percentage >= 0, e.g. 5 (fail when the step time is slower by more)");
  }

  std::optional<ReportsProgress> progress;
  std::string side_name;
  DiffProgress told;
  told.summarising = [&](std::string_view side) { side_name = "nsel diff: " + std::string(side); };
  told.side = reading_progress(
      progress, [&side_name] { return side_name; }, options.quiet, options.verbose);
  const RunDiff diff = diff_reports(request, told);
  if (!options.csv_dir.empty()) {
    write_diff_csv(diff, options.csv_dir);
    if (!options.quiet)
      std::fprintf(stderr, "nsel diff: wrote CSV files to %s\n", options.csv_dir.c_str());
  }
  if (!options.html_file.empty()) {
    write_diff_html(diff, options.html_file);
    if (!options.quiet) std::fprintf(stderr, "nsel diff: wrote %s\n", options.html_file.c_str());
  }
  if (options.json) {
    std::printf("%s\n", json_text(render_diff_document(diff), JsonLayout::document).c_str());
  } else {
    std::fputs(render_diff_text(diff).c_str(), stdout);
  }
  if (!diff.baseline.failures.empty() || !diff.candidate.failures.empty()) return 1;
  if (!diff.gate) return 0;
  switch (diff.gate->outcome) {
    case GateOutcome::passed:
      return 0;
    case GateOutcome::no_evidence:
      // Not a regression (3), and not a pass: nothing that could pass was measured.
      std::fputs(render_gate_line(diff, options.gate).c_str(), stderr);
      return 1;
    case GateOutcome::regression:
      if (!options.quiet) std::fputs(render_gate_line(diff, options.gate).c_str(), stderr);
      return kGateExitCode;
  }
  return 0;
}

}  // namespace

Action add_diff(CLI::App& app) {
  auto options = std::make_shared<DiffCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "diff",
      "Compare two runs across all their ranks: what got faster or slower, where, and whether\n"
      "it is more than noise.\n\n"
      "Each run is what 'nsel report' takes (reports, exports, folders, sessions, SLURM trees),\n"
      "summarised the same way (the exports are shared with it). Processes are paired by\n"
      "identity (--pair-by, default worker and rank; never the PID), steps by number; what has\n"
      "no partner is listed, never dropped. When each run is a single process, the two are\n"
      "paired whatever their names.\n\n"
      "Compared: the step time (median and spread across ranks and steps), each top-level NVTX\n"
      "range inside the steps, communication and compute time and GPU idle (with GPU data),\n"
      "every kernel (full name) and NVTX range by count and time, and each pair of processes\n"
      "(a rank whose change is not the job's is marked out of line).\n\n"
      "Verdict: a metric is 'faster' or 'slower' only when the two-sided Mann-Whitney U test on\n"
      "its per-step values (each the median across the paired processes) gives p < --alpha\n"
      "and the medians differ by at least --min-change percent; 'unchanged' otherwise;\n"
      "'inconclusive' with fewer than --min-steps steps in a run. Kernels and ranges: Welch's\n"
      "t-test on their instances' mean duration. See docs/diff.md.\n\n"
      "Exit code 0; 1 when a report could not be read (the rest is still compared), or when\n"
      "--gate is given and the step time is inconclusive (no process paired, no step in\n"
      "common, too few steps: a gate never passes on no evidence); 2 for bad options; 3 when\n"
      "--gate is given and the step time is slower, by the verdict, by more than its\n"
      "percentage.\n\n"
      "Examples:\n"
      "  nsel diff runs/baseline runs/bigger-buckets\n"
      "  nsel diff --gate 5 --html diff.html main/ pr/          # in CI: exit 3 on a regression\n"
      "  nsel diff --baseline n1/ --baseline n2/ --candidate m1/ --candidate m2/ --json");
  sub->add_option("RUN", options->runs,
                  "the two runs, baseline first: a report, export or folder each")
      ->type_name("BASELINE CANDIDATE");
  sub->add_option("--baseline", options->baseline_paths,
                  "a path of the baseline run (repeat for several)")
      ->type_name("PATH");
  sub->add_option("--candidate", options->candidate_paths,
                  "a path of the candidate run (repeat for several)")
      ->type_name("PATH");
  sub->add_flag("--json", options->json,
                std::string("print one JSON document (schema ") + kDiffJsonSchema + ")");
  sub->add_option("--csv", options->csv_dir, "also write CSV tables into this folder")
      ->type_name("DIR");
  sub->add_option("--html", options->html_file, "also write a self-contained HTML page")
      ->type_name("FILE");
  sub->add_option("--gate", options->gate,
                  "exit 3 when the step time is slower by more than this percentage and the "
                  "verdict says it is real; exit 1 when the step time is inconclusive")
      ->type_name("PERCENT");
  sub->add_option("--alpha", options->alpha, "significance level of the tests")
      ->capture_default_str()
      ->type_name("P");
  sub->add_option("--min-change", options->min_change,
                  "a smaller change of the medians, in percent, is 'unchanged'")
      ->capture_default_str()
      ->type_name("PERCENT");
  sub->add_option("--min-steps", options->min_steps,
                  "fewer steps in a run make its verdicts 'inconclusive'")
      ->capture_default_str()
      ->type_name("N");
  sub->add_option("--pair-by", options->pair_by,
                  "what pairs processes: a comma-separated set of worker, rank and node")
      ->capture_default_str()
      ->type_name("KEYS");
  sub->add_option("--step-name", options->step_name,
                  "NVTX range name of a step, {n} standing for its number")
      ->capture_default_str()
      ->type_name("PATTERN");
  sub->add_flag("--short-kernel-names", options->short_kernel_names,
                "compare kernels by their short name rather than the full demangled name");
  sub->add_option("-j,--jobs", options->jobs, "reports read at once (default: one per CPU)")
      ->type_name("N");
  sub->add_option("--cache-dir", options->cache_dir,
                  "where exports go when a report's folder is read-only (as nsel report)")
      ->type_name("DIR");
  sub->add_flag("-q,--quiet", options->quiet, "no progress on stderr");
  sub->add_flag("-v,--verbose", options->verbose,
                "show nsys's own output of each export it runs (without: kept in "
                "<report>.nsys-export.log when nsys fails)");
  return [options](const std::vector<std::string>&) { return run_diff(*options); };
}

}  // namespace nsel::cli
