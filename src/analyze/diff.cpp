// nsel diff's engine: pairing processes and steps of two runs, and the verdicts (diff.hpp).
#include "nsel/analyze/diff.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <type_traits>

#include "analyze/rank_tests.hpp"
#include "nsel/analyze/comparison.hpp"
#include "nsel/analyze/range_names.hpp"
#include "nsel/core/error.hpp"

namespace nsel {

namespace {

constexpr const char* kPairingForm = "a comma-separated set of worker, rank and node (worker,rank)";

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

}  // namespace

PairingRule parse_pairing_rule(std::string_view text, std::string_view flag) {
  if (trimmed(text).empty()) throw Error(bad_value(flag, text, "empty", kPairingForm));
  PairingRule rule{false, false, false};
  std::set<std::string> seen;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = text.find(',', begin);
    const std::string part = trimmed(text.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin));
    if (part.empty()) throw Error(bad_value(flag, text, "an empty part", kPairingForm));
    if (!seen.insert(part).second) {
      throw Error(bad_value(flag, text, quote(part) + " given twice", kPairingForm));
    }
    if (part == "worker") {
      rule.worker = true;
    } else if (part == "rank") {
      rule.rank = true;
    } else if (part == "node") {
      rule.node = true;
    } else {
      throw Error(bad_value(flag, text, "unknown part " + quote(part), kPairingForm));
    }
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return rule;
}

std::string pairing_rule_text(const PairingRule& rule) {
  std::string out;
  const auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ",";
    out += name;
  };
  add(rule.worker, "worker");
  add(rule.rank, "rank");
  add(rule.node, "node");
  return out;
}

std::string_view verdict_name(ChangeVerdict verdict) {
  switch (verdict) {
    case ChangeVerdict::faster:
      return "faster";
    case ChangeVerdict::slower:
      return "slower";
    case ChangeVerdict::unchanged:
      return "unchanged";
    case ChangeVerdict::inconclusive:
      return "inconclusive";
  }
  return "inconclusive";
}

Distribution distribution_of(std::vector<double> values) {
  Distribution out;
  out.count = values.size();
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  // Linear interpolation between order statistics at (n - 1) q: the median of an even count is
  // the mean of the middle two.
  const auto at = [&](double q) {
    const double position = q * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const std::size_t above = std::min(below + 1, values.size() - 1);
    const double fraction = position - static_cast<double>(below);
    return values[below] + (values[above] - values[below]) * fraction;
  };
  out.median = at(0.5);
  out.q1 = at(0.25);
  out.q3 = at(0.75);
  out.min = values.front();
  out.max = values.back();
  return out;
}

double mann_whitney_p(const std::vector<double>& baseline, const std::vector<double>& candidate) {
  return analyze::mann_whitney_two_sided_p(baseline, candidate);
}

namespace {

double change_percent_of(double baseline, double candidate) {
  if (baseline == 0) return 0;  // nothing to compare against; the verdict says what changed
  return (candidate - baseline) / baseline * 100.0;  // exact for round ratios, unlike c / b - 1
}

// Why `baseline` and `candidate` values are too few to test, or "" when they are not.
std::string few_steps_reason(std::size_t baseline, std::size_t candidate, std::size_t needed) {
  const std::string at_least = ", at least " + std::to_string(needed) + " needed";
  const bool few_baseline = baseline < needed;
  const bool few_candidate = candidate < needed;
  if (baseline == 0 && candidate == 0) {
    // Most often a capture without step ranges (or another step name): say so, not a count.
    return "no NVTX range named as a step in either run, at least " + std::to_string(needed) +
           " steps needed";
  }
  if (few_baseline && few_candidate) {
    if (baseline == candidate) return std::to_string(baseline) + " steps in each run" + at_least;
    return std::to_string(baseline) + " steps in the baseline and " + std::to_string(candidate) +
           " in the candidate" + at_least;
  }
  if (few_baseline) return std::to_string(baseline) + " steps in the baseline" + at_least;
  if (few_candidate) return std::to_string(candidate) + " steps in the candidate" + at_least;
  return "";
}

// The tested values are the steps both sides have; when they are too few, the reason says that
// the sides share no step number at all (`shared_steps` 0), else names the side whose own steps
// are too few, and only else the steps they share.
void explain_few_steps(Change& change, std::size_t baseline_steps, std::size_t candidate_steps,
                       std::size_t shared_steps, std::size_t needed) {
  if (change.reason.empty()) return;
  if (shared_steps == 0 && baseline_steps > 0 && candidate_steps > 0) {
    change.reason = "no step in common: the baseline has " + std::to_string(baseline_steps) +
                    " steps and the candidate " + std::to_string(candidate_steps) +
                    ", none with the same number";
    return;
  }
  change.reason = few_steps_reason(baseline_steps, candidate_steps, needed);
  if (change.reason.empty()) {
    change.reason = std::to_string(change.baseline_steps.count) + " steps in both runs, at least " +
                    std::to_string(needed) + " needed";
  }
}

}  // namespace

Change compare_step_values(const std::vector<double>& baseline,
                           const std::vector<double>& candidate, const DiffOptions& options) {
  Change out;
  out.baseline = out.baseline_steps = distribution_of(baseline);
  out.candidate = out.candidate_steps = distribution_of(candidate);
  out.change_percent = change_percent_of(out.baseline_steps.median, out.candidate_steps.median);
  out.reason = few_steps_reason(baseline.size(), candidate.size(), options.min_steps);
  if (!out.reason.empty()) return out;
  out.p_value = mann_whitney_p(baseline, candidate);
  const double difference = out.candidate_steps.median - out.baseline_steps.median;
  // From a median of zero (a range that only the candidate has) any difference is large enough.
  const bool large_enough = out.baseline_steps.median == 0
                                ? difference != 0
                                : std::fabs(out.change_percent) >= options.min_change_percent;
  if (out.p_value < options.alpha && large_enough) {
    out.verdict = difference < 0 ? ChangeVerdict::faster : ChangeVerdict::slower;
  } else {
    out.verdict = ChangeVerdict::unchanged;
  }
  return out;
}

namespace {

// One step of one process: a step number seen twice (a restarted loop) counts with its sums,
// as `nsel report` counts it.
struct StepValues {
  double duration = 0;
  bool gpu = false;  // the GPU fields below are known
  double communication = 0;
  double compute = 0;
  double gpu_idle = 0;
  std::map<std::string, double> ranges;
};

std::map<long long, StepValues> steps_of(const ProcessSummary& p) {
  std::map<long long, StepValues> out;
  for (const StepSummary& s : p.steps) {
    if (s.cut) continue;  // cut by the end of capture: its length is not the step's
    const bool fresh = !out.count(s.step);
    StepValues& v = out[s.step];
    v.duration += static_cast<double>(s.duration_ns());
    const bool gpu = p.has_gpu && s.communication_ns && s.compute_ns && s.gpu_busy_ns;
    v.gpu = fresh ? gpu : v.gpu && gpu;
    if (gpu) {
      v.communication += static_cast<double>(*s.communication_ns);
      v.compute += static_cast<double>(*s.compute_ns);
      v.gpu_idle += static_cast<double>(*s.gpu_idle_ns());
    }
    for (const RangeShare& r : s.shares) v.ranges[r.range] += static_cast<double>(r.ns);
  }
  return out;
}

std::string key_of(const ReportIdentity& id, const PairingRule& rule) {
  std::string out;
  const auto add = [&](const std::string& part) {
    if (part.empty()) return;
    if (!out.empty()) out += " ";
    out += part;
  };
  if (rule.worker) add(id.worker);
  if (rule.rank && id.rank) add("rank " + std::to_string(*id.rank));
  if (rule.node && !id.node.empty()) add("node " + id.node);
  return out.empty() ? "-" : out;
}

struct Pairing {
  const ProcessSummary* baseline = nullptr;
  const ProcessSummary* candidate = nullptr;
  std::map<long long, StepValues> baseline_steps;
  std::map<long long, StepValues> candidate_steps;
  std::vector<long long> paired_steps;
};

// A side's processes by pairing key (key_of).
using ProcessesByKey = std::map<std::string, std::vector<const ProcessSummary*>>;

// Processes of a side by key, each key's in the order of their labels.
ProcessesByKey by_key(const ReportSet& set, const PairingRule& rule) {
  ProcessesByKey out;
  for (const ProcessSummary& p : set.processes) out[key_of(p.identity, rule)].push_back(&p);
  for (auto& [key, list] : out) {
    std::stable_sort(list.begin(), list.end(), [](const auto* a, const auto* b) {
      return a->identity.label() < b->identity.label();
    });
  }
  return out;
}

// Keys in the order a reader expects: "w rank 2" before "w rank 10" (runs of digits compare
// as numbers), else as text.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t i_end = i, j_end = j;
      while (i_end < a.size() && digit(a[i_end])) ++i_end;
      while (j_end < b.size() && digit(b[j_end])) ++j_end;
      // Leading zeros aside, the longer run is the larger number.
      std::string_view x(a.data() + i, i_end - i), y(b.data() + j, j_end - j);
      while (x.size() > 1 && x.front() == '0') x.remove_prefix(1);
      while (y.size() > 1 && y.front() == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i_end;
      j = j_end;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;  // equal but for leading zeros
}

UnpairedProcess unpaired_of(const std::string& side, const std::string& key,
                            const ProcessSummary& p) {
  return {side, key, p.identity.label(), p.report};
}

// Why nothing was compared: the keys each side had, so that a wrong --pair-by or two runs of
// different jobs show at once (rather than a blame on missing steps).
std::string no_pair_reason(const ProcessesByKey& baseline, const ProcessesByKey& candidate,
                           const PairingRule& rule) {
  const auto keys = [](const auto& by) {
    std::string out;
    std::size_t shown = 0;
    for (const auto& [key, list] : by) {
      if (shown++ == 3) {
        out += ", ... (" + std::to_string(by.size()) + " keys in all)";
        break;
      }
      out += (out.empty() ? "" : ", ") + quote(key);
    }
    return out.empty() ? std::string("no process") : out;
  };
  return "no process could be paired by " + pairing_rule_text(rule) + ": the baseline has " +
         keys(baseline) + ", the candidate " + keys(candidate);
}

struct JobMetric {
  MetricDiff::Kind kind;
  std::string name;
  bool needs_gpu = false;
  std::function<double(const StepValues&)> value;
};

// The metric over the job: per paired step, the value of each pair that has it on both sides
// (and its GPU fields when the metric needs them); tested, per step, the median over pairs.
Change job_change(const std::vector<Pairing>& pairs, const JobMetric& metric,
                  const std::vector<long long>& step_numbers, const DiffOptions& options) {
  std::vector<double> all_baseline, all_candidate, step_baseline, step_candidate;
  for (long long step : step_numbers) {
    std::vector<double> b, c;
    for (const Pairing& pair : pairs) {
      const auto bi = pair.baseline_steps.find(step);
      const auto ci = pair.candidate_steps.find(step);
      if (bi == pair.baseline_steps.end() || ci == pair.candidate_steps.end()) continue;
      if (metric.needs_gpu && !(bi->second.gpu && ci->second.gpu)) continue;
      b.push_back(metric.value(bi->second));
      c.push_back(metric.value(ci->second));
    }
    if (b.empty()) continue;
    all_baseline.insert(all_baseline.end(), b.begin(), b.end());
    all_candidate.insert(all_candidate.end(), c.begin(), c.end());
    step_baseline.push_back(*median_across(b));
    step_candidate.push_back(*median_across(c));
  }
  Change out = compare_step_values(step_baseline, step_candidate, options);
  out.baseline = distribution_of(all_baseline);
  out.candidate = distribution_of(all_candidate);
  std::set<long long> baseline_numbers, candidate_numbers;
  for (const Pairing& pair : pairs) {
    for (const auto& [step, values] : pair.baseline_steps) baseline_numbers.insert(step);
    for (const auto& [step, values] : pair.candidate_steps) candidate_numbers.insert(step);
  }
  explain_few_steps(out, baseline_numbers.size(), candidate_numbers.size(), step_numbers.size(),
                    options.min_steps);
  return out;
}

// One process's own metric over its paired steps.
Change pair_change(const Pairing& pair, const JobMetric& metric, const DiffOptions& options) {
  std::vector<double> b, c;
  for (long long step : pair.paired_steps) {
    const StepValues& bs = pair.baseline_steps.at(step);
    const StepValues& cs = pair.candidate_steps.at(step);
    if (metric.needs_gpu && !(bs.gpu && cs.gpu)) continue;
    b.push_back(metric.value(bs));
    c.push_back(metric.value(cs));
  }
  Change out = compare_step_values(b, c, options);
  explain_few_steps(out, pair.baseline_steps.size(), pair.candidate_steps.size(),
                    pair.paired_steps.size(), options.min_steps);
  return out;
}

// Instances of one name, pooled over processes and rows (grids, blocks), as pool_stats pools
// them (no median: the parts' medians do not make one; nsel diff compares counts, totals and
// means).
struct Pool {
  bool communication = false;
  std::vector<DurationStats> parts;

  void add(const DurationStats& s) {
    if (s.count > 0) parts.push_back(s);
  }
  DurationStats stats() const { return pool_stats(parts); }
};

TotalsDiff totals_diff(const std::string& name, const Pool& baseline, const Pool& candidate,
                       const DiffOptions& options) {
  TotalsDiff out;
  out.name = name;
  out.communication = baseline.communication || candidate.communication;
  out.baseline = baseline.stats();
  out.candidate = candidate.stats();
  out.count_change = out.candidate.count - out.baseline.count;
  out.total_change_percent = out.baseline.total == 0
                                 ? 0
                                 : change_percent_of(static_cast<double>(out.baseline.total),
                                                     static_cast<double>(out.candidate.total));
  const analyze::SampleMoments b{static_cast<double>(out.baseline.count), out.baseline.mean,
                                 out.baseline.stddev};
  const analyze::SampleMoments c{static_cast<double>(out.candidate.count), out.candidate.mean,
                                 out.candidate.stddev};
  if (!analyze::welch_testable(b, c)) return out;
  out.mean_p_value = analyze::welch_two_sided_p(b, c);
  const double mean_change = change_percent_of(b.mean, c.mean);
  if (out.mean_p_value < options.alpha && std::fabs(mean_change) >= options.min_change_percent) {
    out.mean_verdict = c.mean < b.mean ? ChangeVerdict::faster : ChangeVerdict::slower;
  } else {
    out.mean_verdict = ChangeVerdict::unchanged;
  }
  return out;
}

template <typename Row>
std::vector<TotalsDiff> totals_diffs(const std::vector<Pairing>& pairs,
                                     std::vector<Row> ProcessSummary::*rows,
                                     const DiffOptions& options) {
  std::map<std::string, std::pair<Pool, Pool>> pools;
  for (const Pairing& pair : pairs) {
    for (const Row& r : pair.baseline->*rows) {
      Pool& pool = pools[r.name].first;
      pool.add(r.stats);
      if constexpr (std::is_same_v<Row, KernelRow>) pool.communication |= r.communication;
    }
    for (const Row& r : pair.candidate->*rows) {
      Pool& pool = pools[r.name].second;
      pool.add(r.stats);
      if constexpr (std::is_same_v<Row, KernelRow>) pool.communication |= r.communication;
    }
  }
  std::vector<TotalsDiff> out;
  for (const auto& [name, sides] : pools) {
    out.push_back(totals_diff(name, sides.first, sides.second, options));
    if constexpr (std::is_same_v<Row, KernelRow>) {
      out.back().communication |= is_communication_kernel(name);
    }
  }
  const auto moved = [](const TotalsDiff& d) {
    return std::llabs(d.candidate.total - d.baseline.total);
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const TotalsDiff& a, const TotalsDiff& b) { return moved(a) > moved(b); });
  return out;
}

bool verdict_is_a_change(ChangeVerdict v) {
  return v == ChangeVerdict::faster || v == ChangeVerdict::slower;
}

// The processes of both runs as paired: each pair as the engine reads it (Pairing) and as the
// output shows it (ProcessPairDiff), at the same index.
struct PairedProcesses {
  std::vector<Pairing> pairings;
  std::vector<ProcessPairDiff> pairs;
  std::vector<UnpairedProcess> unpaired;

  void add(const std::string& key, const std::string& paired_by, const ProcessSummary& b,
           const ProcessSummary& c) {
    ProcessPairDiff pair;
    pair.key = key;
    pair.baseline = b.identity;
    pair.candidate = c.identity;
    pair.baseline_report = b.report;
    pair.candidate_report = c.report;
    pair.paired_by = paired_by;
    pairs.push_back(std::move(pair));
    Pairing pairing;
    pairing.baseline = &b;
    pairing.candidate = &c;
    pairings.push_back(std::move(pairing));
  }
};

// Processes of one key are paired in the order of their labels; those a side has beyond the
// other's count stay unpaired.
PairedProcesses pair_processes(const ReportSet& baseline, const ReportSet& candidate,
                               const ProcessesByKey& baseline_keys,
                               const ProcessesByKey& candidate_keys) {
  PairedProcesses out;
  if (baseline.processes.size() == 1 && candidate.processes.size() == 1 &&
      baseline_keys.begin()->first != candidate_keys.begin()->first) {
    // One process a side (two single-process runs, reports named after the run): they are
    // the same process of two runs, whatever their keys say.
    out.add(baseline_keys.begin()->first + " / " + candidate_keys.begin()->first, "only process",
            baseline.processes.front(), candidate.processes.front());
    return out;
  }
  for (const auto& [key, list] : baseline_keys) {
    const auto found = candidate_keys.find(key);
    const std::size_t other = found == candidate_keys.end() ? 0 : found->second.size();
    const std::string paired_by = list.size() == 1 && other == 1 ? "identity" : "order";
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i < other) {
        out.add(key, paired_by, *list[i], *found->second[i]);
      } else {
        out.unpaired.push_back(unpaired_of("baseline", key, *list[i]));
      }
    }
  }
  for (const auto& [key, list] : candidate_keys) {
    const auto found = baseline_keys.find(key);
    const std::size_t other = found == baseline_keys.end() ? 0 : found->second.size();
    for (std::size_t i = other; i < list.size(); ++i) {
      out.unpaired.push_back(unpaired_of("candidate", key, *list[i]));
    }
  }
  return out;
}

// Pairs the steps of each pair by number, noting each pair's steps that only one side has,
// and in `out` the steps that no pair has on both sides. Returns the step numbers some pair
// has on both sides, in order.
std::vector<long long> pair_steps(PairedProcesses& paired, RunDiff& out) {
  std::set<long long> paired_steps, only_baseline, only_candidate;
  for (std::size_t i = 0; i < paired.pairings.size(); ++i) {
    Pairing& p = paired.pairings[i];
    ProcessPairDiff& pair = paired.pairs[i];
    p.baseline_steps = steps_of(*p.baseline);
    p.candidate_steps = steps_of(*p.candidate);
    for (const auto& [step, values] : p.baseline_steps) {
      if (p.candidate_steps.count(step)) {
        p.paired_steps.push_back(step);
        paired_steps.insert(step);
      } else {
        pair.steps_only_in_baseline.push_back(step);
        only_baseline.insert(step);
      }
    }
    for (const auto& [step, values] : p.candidate_steps) {
      if (!p.baseline_steps.count(step)) {
        pair.steps_only_in_candidate.push_back(step);
        only_candidate.insert(step);
      }
    }
  }
  for (long long step : only_baseline) {
    if (!paired_steps.count(step)) out.steps_only_in_baseline.push_back(step);
  }
  for (long long step : only_candidate) {
    if (!paired_steps.count(step)) out.steps_only_in_candidate.push_back(step);
  }
  return {paired_steps.begin(), paired_steps.end()};
}

// The metrics the job and each pair are judged on.
JobMetric step_metric() {
  return {MetricDiff::Kind::step, "step", false, [](const StepValues& v) { return v.duration; }};
}
JobMetric communication_metric() {
  return {MetricDiff::Kind::communication, "communication", true,
          [](const StepValues& v) { return v.communication; }};
}
JobMetric compute_metric() {
  return {MetricDiff::Kind::compute, "compute", true,
          [](const StepValues& v) { return v.compute; }};
}
JobMetric gpu_idle_metric() {
  return {MetricDiff::Kind::gpu_idle, "GPU idle", true,
          [](const StepValues& v) { return v.gpu_idle; }};
}
JobMetric range_metric(const std::string& name) {
  return {MetricDiff::Kind::range, name, false, [name](const StepValues& v) {
            const auto found = v.ranges.find(name);
            return found == v.ranges.end() ? 0.0 : found->second;  // absent: 0
          }};
}

// Every top-level range of the paired steps, on either side, largest baseline median first.
std::vector<MetricDiff> range_metrics(const std::vector<Pairing>& pairings,
                                      const std::vector<long long>& step_numbers,
                                      const DiffOptions& options) {
  std::set<std::string> range_names;
  for (const Pairing& p : pairings) {
    for (long long step : p.paired_steps) {
      for (const auto& [name, ns] : p.baseline_steps.at(step).ranges) range_names.insert(name);
      for (const auto& [name, ns] : p.candidate_steps.at(step).ranges) range_names.insert(name);
    }
  }
  std::vector<MetricDiff> ranges;
  for (const std::string& name : range_names) {
    const JobMetric range = range_metric(name);
    ranges.push_back({range.kind, name, job_change(pairings, range, step_numbers, options)});
  }
  std::stable_sort(ranges.begin(), ranges.end(), [](const MetricDiff& a, const MetricDiff& b) {
    return a.change.baseline_steps.median > b.change.baseline_steps.median;
  });
  return ranges;
}

// The job's metrics in RunDiff::metrics's order: the step time; communication, compute and GPU
// idle when some pair has GPU data on both sides; then the ranges.
std::vector<MetricDiff> job_metrics(const std::vector<Pairing>& pairings,
                                    const std::vector<long long>& step_numbers,
                                    const DiffOptions& options) {
  std::vector<MetricDiff> out;
  const JobMetric step = step_metric();
  out.push_back({step.kind, step.name, job_change(pairings, step, step_numbers, options)});
  const bool gpu = std::any_of(pairings.begin(), pairings.end(), [](const Pairing& p) {
    return p.baseline->has_gpu && p.candidate->has_gpu;
  });
  if (gpu) {
    for (const JobMetric& m : {communication_metric(), compute_metric(), gpu_idle_metric()}) {
      out.push_back({m.kind, m.name, job_change(pairings, m, step_numbers, options)});
    }
  }
  std::vector<MetricDiff> ranges = range_metrics(pairings, step_numbers, options);
  out.insert(out.end(), ranges.begin(), ranges.end());
  return out;
}

// Each pair's own verdicts, and whether its step time moved otherwise than the job's.
void judge_pairs(PairedProcesses& paired, const Change& job_step, const DiffOptions& options) {
  const JobMetric step = step_metric();
  const JobMetric compute = compute_metric();
  const JobMetric communication = communication_metric();
  for (std::size_t i = 0; i < paired.pairings.size(); ++i) {
    ProcessPairDiff& pair = paired.pairs[i];
    const Pairing& p = paired.pairings[i];
    pair.step = pair_change(p, step, options);
    if (p.baseline->has_gpu && p.candidate->has_gpu) {
      pair.compute = pair_change(p, compute, options);
      pair.communication = pair_change(p, communication, options);
    }
    pair.change_vs_job_points = pair.step.change_percent - job_step.change_percent;
    pair.out_of_line =
        verdict_is_a_change(pair.step.verdict) && pair.step.verdict != job_step.verdict;
  }
}

// Each paired step number: its time across the pairs that have it on both sides.
std::vector<StepDiff> step_diffs(const std::vector<Pairing>& pairings,
                                 const std::vector<long long>& step_numbers) {
  std::vector<StepDiff> out;
  for (long long step : step_numbers) {
    std::vector<double> b, c;
    for (const Pairing& p : pairings) {
      const auto bi = p.baseline_steps.find(step);
      const auto ci = p.candidate_steps.find(step);
      if (bi == p.baseline_steps.end() || ci == p.candidate_steps.end()) continue;
      b.push_back(bi->second.duration);
      c.push_back(ci->second.duration);
    }
    StepDiff d;
    d.step = step;
    d.baseline = distribution_of(b);
    d.candidate = distribution_of(c);
    d.change_percent = change_percent_of(d.baseline.median, d.candidate.median);
    out.push_back(d);
  }
  return out;
}

// Sorted by key; pairs of one key keep their label order.
std::vector<ProcessPairDiff> sorted_by_key(std::vector<ProcessPairDiff> pairs) {
  std::vector<std::size_t> order(pairs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return natural_less(pairs[a].key, pairs[b].key);
  });
  std::vector<ProcessPairDiff> out;
  for (std::size_t i : order) out.push_back(std::move(pairs[i]));
  return out;
}

// The baseline's first, each side's by key and label.
void sort_unpaired(std::vector<UnpairedProcess>& unpaired) {
  std::stable_sort(unpaired.begin(), unpaired.end(),
                   [](const UnpairedProcess& a, const UnpairedProcess& b) {
                     if (a.side != b.side) return a.side == "baseline";
                     if (a.key != b.key) return natural_less(a.key, b.key);
                     return a.label < b.label;
                   });
}

}  // namespace

RunDiff diff_runs(const ReportSet& baseline, const ReportSet& candidate,
                  const DiffOptions& options) {
  RunDiff out;
  out.options = options;
  out.baseline.processes = baseline.processes.size();
  out.baseline.failures = baseline.failures;
  out.candidate.processes = candidate.processes.size();
  out.candidate.failures = candidate.failures;

  const ProcessesByKey baseline_keys = by_key(baseline, options.pairing);
  const ProcessesByKey candidate_keys = by_key(candidate, options.pairing);
  PairedProcesses paired = pair_processes(baseline, candidate, baseline_keys, candidate_keys);
  const std::vector<long long> step_numbers = pair_steps(paired, out);

  out.metrics = job_metrics(paired.pairings, step_numbers, options);
  if (paired.pairings.empty()) {
    out.metrics.front().change.reason =
        no_pair_reason(baseline_keys, candidate_keys, options.pairing);
  }
  judge_pairs(paired, out.metrics.front().change, options);
  out.steps = step_diffs(paired.pairings, step_numbers);
  out.kernels = totals_diffs(paired.pairings, &ProcessSummary::kernels, options);
  out.nvtx = totals_diffs(paired.pairings, &ProcessSummary::nvtx, options);

  out.pairs = sorted_by_key(std::move(paired.pairs));
  out.unpaired = std::move(paired.unpaired);
  sort_unpaired(out.unpaired);
  if (options.gate_percent) out.gate = judge_gate(out, *options.gate_percent);
  return out;
}

std::string_view gate_outcome_name(GateOutcome outcome) {
  switch (outcome) {
    case GateOutcome::passed:
      return "passed";
    case GateOutcome::regression:
      return "regression";
    case GateOutcome::no_evidence:
      return "no_evidence";
  }
  return "no_evidence";
}

GateResult judge_gate(const RunDiff& diff, double percent) {
  GateResult gate;
  gate.percent = percent;
  // Nothing measured is no evidence of "not slower": no process paired, no step in common, or
  // too few steps to tell a change from the steps' spread.
  if (diff.metrics.empty() || diff.pairs.empty() ||
      diff.step_time().change.verdict == ChangeVerdict::inconclusive) {
    gate.outcome = GateOutcome::no_evidence;
    gate.reason = diff.metrics.empty() ? std::string("no step time was compared")
                                       : diff.step_time().change.reason;
    return gate;
  }
  const Change& step = diff.step_time().change;
  gate.outcome = step.verdict == ChangeVerdict::slower && step.change_percent > percent
                     ? GateOutcome::regression
                     : GateOutcome::passed;
  return gate;
}

}  // namespace nsel
