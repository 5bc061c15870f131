// Two runs compared across all their ranks (`nsel diff BASELINE CANDIDATE`): processes paired
// by identity, steps paired by number, and for the step time, each top-level range,
// communication, compute and GPU idle a verdict (faster, slower, unchanged, inconclusive) that
// calls a change real only when the steps' own spread cannot explain it; kernels and NVTX ranges
// compared by their totals; the ranks whose change differs from the job's.
//
// The rule behind a verdict (docs/diff.md): the two-sided Mann-Whitney U test on the metric's
// per-step values, each the median across the paired processes of that step (ranks of one step
// are not independent samples: they wait for each other), p below `alpha`, and a change of the
// medians of at least `min_change_percent`. Fewer than `min_steps` values on a side:
// inconclusive.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/analyze/report_set.hpp"
#include "nsel/analyze/summary.hpp"

namespace nsel {

// What pairs a baseline process with a candidate one; never the PID, which changes every run.
struct PairingRule {
  bool worker = true;
  bool rank = true;
  bool node = false;  // only when asked: a rerun is often placed on other nodes
};

// Parses "worker,rank", "rank", "worker,rank,node"...: a comma-separated, non-empty set of
// worker, rank and node. Throws nsel::Error (exit code 2) naming `flag` otherwise.
PairingRule parse_pairing_rule(std::string_view text, std::string_view flag = "--pair-by");
std::string pairing_rule_text(const PairingRule& rule);  // "worker,rank"

struct DiffOptions {
  PairingRule pairing;
  double alpha = 0.01;            // significance level of the two-sided test
  double min_change_percent = 1;  // a smaller change of the medians is "unchanged"
  std::size_t min_steps = 5;      // fewer per-step values on a side: "inconclusive"
  // --gate PERCENT: the diff carries the gate's result (RunDiff::gate).
  std::optional<double> gate_percent;
};

enum class ChangeVerdict { faster, slower, unchanged, inconclusive };
std::string_view verdict_name(ChangeVerdict verdict);  // "faster", "slower", ...

// What `nsel diff --gate PERCENT` says: exit 0, 3 or 1.
enum class GateOutcome {
  passed,       // the step time was measured and is not slower by more than the percent
  regression,   // slower, beyond the steps' spread, by more than the percent
  no_evidence,  // the step time is inconclusive: nothing that could pass was measured
};
std::string_view gate_outcome_name(GateOutcome outcome);  // "passed", "regression", "no_evidence"

struct GateResult {
  double percent = 0;
  GateOutcome outcome = GateOutcome::no_evidence;
  std::string reason;  // no_evidence: why (the step time's reason)
};

// The spread of one side's values (nanoseconds).
struct Distribution {
  std::size_t count = 0;
  double median = 0;
  double q1 = 0;  // quartiles, linear interpolation between order statistics
  double q3 = 0;
  double min = 0;
  double max = 0;
};
Distribution distribution_of(std::vector<double> values);

// Two sides of one metric and the test between them.
struct Change {
  Distribution baseline;  // every (process, step) value: the spread across ranks and steps
  Distribution candidate;
  Distribution baseline_steps;  // the tested values: one per step, the median across processes
  Distribution candidate_steps;
  double change_percent = 0;  // of the tested medians: (candidate / baseline - 1) * 100
  double p_value = 1;         // two-sided Mann-Whitney U; 1 when not tested
  ChangeVerdict verdict = ChangeVerdict::inconclusive;
  std::string reason;  // why inconclusive ("3 steps in the baseline, at least 5 needed"), else ""
};

// The Mann-Whitney U test: exact for small samples without ties, else the normal approximation
// with tie and continuity corrections. Returns the two-sided p-value (1 for an empty side).
double mann_whitney_p(const std::vector<double>& baseline, const std::vector<double>& candidate);

// The verdict on two samples of per-step values, by the rule above.
Change compare_step_values(const std::vector<double>& baseline,
                           const std::vector<double>& candidate, const DiffOptions& options);

// One metric of the whole job, per step.
struct MetricDiff {
  enum class Kind { step, range, communication, compute, gpu_idle };
  Kind kind = Kind::step;
  std::string name;  // "step", the range's (grouped) name, "communication", "compute", "GPU idle"
  Change change;
};

// One step number both runs have: its time across the paired processes.
struct StepDiff {
  long long step = 0;
  Distribution baseline;
  Distribution candidate;
  double change_percent = 0;  // of the medians
};

// One paired process.
struct ProcessPairDiff {
  std::string key;  // what paired them: "dtensor_policy_worker rank 3"
  ReportIdentity baseline;
  ReportIdentity candidate;
  std::filesystem::path baseline_report;
  std::filesystem::path candidate_report;
  // How they were paired: "identity"; "order" when several processes share a key and were
  // paired in the order of their labels; "only process" when each side has one process whose
  // keys differ.
  std::string paired_by;
  Change step;                    // over this process's own paired steps
  std::optional<Change> compute;  // both have GPU data
  std::optional<Change> communication;
  double change_vs_job_points = 0;  // its step change minus the job's, in percentage points
  // Its own step verdict is faster or slower and not the job's: a rank that got slower while
  // the rest did not, or the other way round.
  bool out_of_line = false;
  std::vector<long long> steps_only_in_baseline;
  std::vector<long long> steps_only_in_candidate;
};

// A kernel (by full name, over every grid and block) or an NVTX range (by name): its totals in
// each run, summed over the paired processes.
struct TotalsDiff {
  std::string name;
  bool communication = false;  // a kernel of NCCL and the like (is_communication_kernel)
  DurationStats baseline;      // count, total, mean, stddev, min, max of its instances; no median
  DurationStats candidate;
  long long count_change = 0;       // candidate count - baseline count
  double total_change_percent = 0;  // of the total time; 0 when the baseline has none
  // Welch's t-test on the instances' mean duration (from counts, means and standard
  // deviations): the mean duration changed, not only the count.
  double mean_p_value = 1;
  ChangeVerdict mean_verdict = ChangeVerdict::inconclusive;
};

struct UnpairedProcess {
  std::string side;  // "baseline" or "candidate"
  std::string key;
  std::string label;
  std::filesystem::path report;
};

struct DiffSide {
  std::vector<std::string> paths;  // as given
  std::size_t processes = 0;
  std::vector<ReportFailure> failures;
  RunFacts run;  // which run the side's reports are of
};

struct RunDiff {
  DiffOptions options;
  DiffSide baseline;
  DiffSide candidate;
  std::vector<ProcessPairDiff> pairs;  // sorted by key
  std::vector<UnpairedProcess> unpaired;
  std::vector<StepDiff> steps;  // step numbers some pair has on both sides, by number
  std::vector<long long> steps_only_in_baseline;  // in no pair's candidate
  std::vector<long long> steps_only_in_candidate;
  // First the step time, then communication, compute and GPU idle (when both runs have GPU
  // data), then each top-level range, largest baseline median first.
  std::vector<MetricDiff> metrics;
  std::vector<TotalsDiff> kernels;  // by |total change| in time, largest first
  std::vector<TotalsDiff> nvtx;     // every NVTX range name, the same order
  const MetricDiff& step_time() const { return metrics.front(); }
  std::optional<GateResult> gate;  // with DiffOptions::gate_percent
};

// Compares two summarised runs. Processes that cannot be paired are listed in `unpaired`,
// never dropped silently. The sets' processes need their kernels uncut (SummaryOptions
// top_kernels large enough) for the kernel totals to be whole.
RunDiff diff_runs(const ReportSet& baseline, const ReportSet& candidate,
                  const DiffOptions& options);

// --gate PERCENT: the step time slower, by the verdict, and by more than `percent`, is a
// regression; a gate never passes on no evidence, so an inconclusive step time (no process
// paired, no step in common, too few steps) is no_evidence, with its reason. diff_runs judges it
// when DiffOptions::gate_percent is set.
GateResult judge_gate(const RunDiff& diff, double percent);

}  // namespace nsel
