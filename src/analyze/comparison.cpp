#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "nsel/analyze/comparison.hpp"

#include "analyze/duration_stats.hpp"

namespace nsel {

std::optional<double> median_across(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  const std::size_t n = values.size();
  std::sort(values.begin(), values.end());
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

std::optional<double> median_of_others(const std::vector<std::optional<long long>>& values,
                                       std::size_t index) {
  std::vector<double> others;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != index && values[i]) others.push_back(static_cast<double>(*values[i]));
  }
  return median_across(std::move(others));
}

std::optional<double> percent_above_others(const std::vector<std::optional<long long>>& values,
                                           std::size_t index) {
  if (index >= values.size() || !values[index]) return std::nullopt;
  const std::optional<double> median = median_of_others(values, index);
  if (!median || *median <= 0) return std::nullopt;
  return (static_cast<double>(*values[index]) / *median - 1.0) * 100.0;
}

bool is_straggler(const std::optional<double>& percent_above, double threshold_percent) {
  return percent_above && *percent_above > threshold_percent;
}

bool is_communication_range(std::string_view name) {
  std::string folded;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == '.' || c == ' ') continue;
    folded += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  constexpr std::array<std::string_view, 6> kCollectives = {
      "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "barrier"};
  return std::any_of(kCollectives.begin(), kCollectives.end(), [&](std::string_view collective) {
    return folded.find(collective) != std::string::npos;
  });
}

namespace {

// The process that is a straggler in the most steps, of equal counts the one further above.
std::optional<RunStraggler> run_straggler(const std::vector<StepAcrossWorkers>& steps,
                                          std::size_t processes) {
  std::vector<RunStraggler> per(processes);
  for (std::size_t p = 0; p < processes; ++p) per[p].process = p;
  for (const StepAcrossWorkers& step : steps) {
    for (std::size_t p = 0; p < processes; ++p) {
      if (!step.work_ns[p]) continue;
      ++per[p].steps;
    }
    for (std::size_t p : step.stragglers) {
      ++per[p].slow_steps;
      per[p].mean_percent_above_others += *step.percent_above_others[p];
    }
  }
  std::optional<RunStraggler> worst;
  for (RunStraggler& candidate : per) {
    if (candidate.slow_steps == 0) continue;
    candidate.mean_percent_above_others /= static_cast<double>(candidate.slow_steps);
    if (!worst || candidate.slow_steps > worst->slow_steps ||
        (candidate.slow_steps == worst->slow_steps &&
         candidate.mean_percent_above_others > worst->mean_percent_above_others)) {
      worst = candidate;
    }
  }
  return worst;
}

}  // namespace

StepComparison compare_steps(const std::vector<ProcessSummary>& processes,
                             double straggler_percent) {
  StepComparison out;
  out.straggler_percent = straggler_percent;
  std::map<long long, std::vector<std::optional<long long>>> by_step;
  std::map<long long, std::vector<std::optional<long long>>> communication_by_step;
  std::map<long long, std::vector<std::optional<long long>>> work_by_step;
  std::set<std::string> communication_ranges;
  for (std::size_t p = 0; p < processes.size(); ++p) {
    for (const StepSummary& s : processes[p].steps) {
      if (s.cut) continue;  // its length is not the step's
      auto& row = by_step[s.step];
      row.resize(processes.size());
      // A step number seen twice in one process (a restarted loop) counts with its total time.
      row[p] = analyze::add_ns(row[p].value_or(0), s.duration_ns());
      long long waiting = 0;
      for (const RangeShare& share : s.shares) {
        if (!is_communication_range(share.range)) continue;
        waiting = analyze::add_ns(waiting, share.ns);
        communication_ranges.insert(share.range);
      }
      auto& work = work_by_step[s.step];
      work.resize(processes.size());
      work[p] = analyze::add_ns(work[p].value_or(0), std::max(0LL, s.duration_ns() - waiting));
      auto& talk = communication_by_step[s.step];
      talk.resize(processes.size());
      if (s.communication_ns) talk[p] = analyze::add_ns(talk[p].value_or(0), *s.communication_ns);
    }
  }
  for (auto& [step, durations] : by_step) {
    StepAcrossWorkers row;
    row.step = step;
    row.duration_ns = std::move(durations);
    row.work_ns = std::move(work_by_step[step]);
    const std::vector<std::optional<long long>>& talk = communication_by_step[step];
    std::optional<long long> least;
    for (const auto& t : talk) {
      if (t && (!least || *t < *least)) least = t;
    }
    row.communication_wait_ns.resize(processes.size());
    for (std::size_t p = 0; p < talk.size(); ++p) {
      if (talk[p]) row.communication_wait_ns[p] = *talk[p] - *least;
    }
    std::vector<double> present;
    for (const auto& d : row.duration_ns) {
      if (d) present.push_back(static_cast<double>(*d));
    }
    row.median_ns = median_across(std::move(present)).value_or(0);
    long long slowest = -1;
    for (std::size_t p = 0; p < row.duration_ns.size(); ++p) {
      row.others_median_ns.push_back(median_of_others(row.work_ns, p));
      row.percent_above_others.push_back(percent_above_others(row.work_ns, p));
      const auto& d = row.duration_ns[p];
      if (!d) continue;
      if (*d > slowest) {
        slowest = *d;
        row.slowest = p;
      }
      if (is_straggler(row.percent_above_others[p], straggler_percent)) row.stragglers.push_back(p);
    }
    std::sort(row.stragglers.begin(), row.stragglers.end(),
              [&](std::size_t a, std::size_t b) { return *row.work_ns[a] > *row.work_ns[b]; });
    std::vector<double> busy;
    std::vector<double> communication;
    for (const ProcessSummary& process : processes) {
      for (const StepSummary& own : process.steps) {
        if (own.step != step || own.duration_ns() <= 0) continue;
        const double d = static_cast<double>(own.duration_ns());
        if (own.gpu_busy_ns) busy.push_back(static_cast<double>(*own.gpu_busy_ns) / d);
        if (own.communication_ns) {
          communication.push_back(static_cast<double>(*own.communication_ns) / d);
        }
      }
    }
    std::vector<double> waits;
    for (const auto& w : row.communication_wait_ns) {
      if (w) waits.push_back(static_cast<double>(*w));
    }
    row.median_gpu_busy_share = median_across(std::move(busy));
    row.median_communication_share = median_across(std::move(communication));
    row.median_communication_wait_ns = median_across(std::move(waits));
    out.steps.push_back(std::move(row));
  }
  out.communication_ranges.assign(communication_ranges.begin(), communication_ranges.end());
  out.straggler = run_straggler(out.steps, processes.size());
  return out;
}

}  // namespace nsel
