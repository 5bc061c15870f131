// Steps across processes: the step-by-worker table, the slowest worker of each step and the
// stragglers (a step time above that step's median across workers by more than a threshold).
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
  // Per process, when it has GPU data: how long it waited in communication kernels this step,
  // estimated as its communication time minus the shortest among the processes that have it
  // (a collective lasts until the last rank arrives, so the fastest one waited least).
  std::vector<std::optional<long long>> communication_wait_ns;
};

struct StepComparison {
  double straggler_percent = 0;
  std::vector<StepAcrossWorkers> steps;  // by step number
};

// `straggler_percent`: how far above the step's median a worker must be (10 = 10 %).
StepComparison compare_steps(const std::vector<ProcessSummary>& processes,
                             double straggler_percent);

}  // namespace nsel
