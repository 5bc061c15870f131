// Steps across processes: the step-by-worker table, the slowest worker of each step and the
// stragglers. One rule says how far a process is above the others, for every output and the
// demo: its value against the median of the OTHER processes' values of the same step (so that
// with two ranks each is compared with the other, not with a mean that holds itself).
#pragma once

#include <optional>
#include <vector>

#include "nsel/analyze/summary.hpp"

namespace nsel {

struct StepAcrossWorkers {
  long long step = 0;
  std::vector<std::optional<long long>> duration_ns;  // per process, in the summaries' order
  double median_ns = 0;                               // over the processes that have the step
  std::size_t slowest = 0;                            // index of the slowest process
  std::vector<std::size_t> stragglers;                // indexes, slowest first
  // Per process: how far its step time is above the median of the others' (percent_above_others).
  std::vector<std::optional<double>> percent_above_others;
  // Per process, when it has GPU data: how long it waited in communication kernels this step,
  // estimated as its communication time minus the shortest among the processes that have it
  // (a collective lasts until the last rank arrives, so the fastest one waited least).
  std::vector<std::optional<long long>> communication_wait_ns;
};

struct StepComparison {
  double straggler_percent = 0;
  std::vector<StepAcrossWorkers> steps;  // by step number
};

// The median of some values (of an even count: the mean of the middle two); nullopt when empty.
std::optional<double> median_across(std::vector<double> values);

// The median of the values present other than values[index]; nullopt when there is none.
std::optional<double> median_of_others(const std::vector<std::optional<long long>>& values,
                                       std::size_t index);

// How far values[index] is above the median of the other values present, in percent (negative:
// below); nullopt when values[index] is absent, no other value is present, or their median is 0.
std::optional<double> percent_above_others(const std::vector<std::optional<long long>>& values,
                                           std::size_t index);

// A straggler: more than `threshold_percent` above the others (percent_above_others).
bool is_straggler(const std::optional<double>& percent_above, double threshold_percent);

// `straggler_percent`: how far above the median of the other workers' a worker's step time must
// be (10 = 10 %).
StepComparison compare_steps(const std::vector<ProcessSummary>& processes,
                             double straggler_percent);

}  // namespace nsel
