#include <algorithm>
#include <map>

#include "nsel/analyze/comparison.hpp"

#include "analyze/duration_stats.hpp"

namespace nsel {

StepComparison compare_steps(const std::vector<ProcessSummary>& processes,
                             double straggler_percent) {
  StepComparison out;
  out.straggler_percent = straggler_percent;
  std::map<long long, std::vector<std::optional<long long>>> by_step;
  std::map<long long, std::vector<std::optional<long long>>> communication_by_step;
  for (std::size_t p = 0; p < processes.size(); ++p) {
    for (const StepSummary& s : processes[p].steps) {
      if (s.cut) continue;  // its length is not the step's
      auto& row = by_step[s.step];
      row.resize(processes.size());
      // A step number seen twice in one process (a restarted loop) counts with its total time.
      row[p] = analyze::add_ns(row[p].value_or(0), s.duration_ns());
      auto& talk = communication_by_step[s.step];
      talk.resize(processes.size());
      if (s.communication_ns) talk[p] = analyze::add_ns(talk[p].value_or(0), *s.communication_ns);
    }
  }
  for (auto& [step, durations] : by_step) {
    StepAcrossWorkers row;
    row.step = step;
    row.duration_ns = std::move(durations);
    const std::vector<std::optional<long long>>& talk = communication_by_step[step];
    std::optional<long long> least;
    for (const auto& t : talk) {
      if (t && (!least || *t < *least)) least = t;
    }
    row.communication_wait_ns.resize(processes.size());
    for (std::size_t p = 0; p < talk.size(); ++p) {
      if (talk[p]) row.communication_wait_ns[p] = *talk[p] - *least;
    }
    std::vector<long long> present;
    for (const auto& d : row.duration_ns) {
      if (d) present.push_back(*d);
    }
    std::sort(present.begin(), present.end());
    const std::size_t n = present.size();
    row.median_ns =
        n % 2
            ? static_cast<double>(present[n / 2])
            : (static_cast<double>(present[n / 2 - 1]) + static_cast<double>(present[n / 2])) / 2.0;
    const double limit = row.median_ns * (1.0 + straggler_percent / 100.0);
    long long slowest = -1;
    for (std::size_t p = 0; p < row.duration_ns.size(); ++p) {
      const auto& d = row.duration_ns[p];
      if (!d) continue;
      if (*d > slowest) {
        slowest = *d;
        row.slowest = p;
      }
      if (static_cast<double>(*d) > limit) row.stragglers.push_back(p);
    }
    std::sort(row.stragglers.begin(), row.stragglers.end(), [&](std::size_t a, std::size_t b) {
      return *row.duration_ns[a] > *row.duration_ns[b];
    });
    out.steps.push_back(std::move(row));
  }
  return out;
}

}  // namespace nsel
