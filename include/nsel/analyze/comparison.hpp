// Steps across processes: the step-by-worker table, the slowest worker of each step and the
// stragglers. One rule says how far a process is above the others, for every output and the
// demo: its value against the median of the OTHER processes' values of the same step (so that
// with two ranks each is compared with the other, not with a mean that holds itself). The value
// judged is a process's own work in the step: the step less its time in communication ranges,
// because in a step that ends in a collective every rank's step lasts until the last one
// arrives, and the straggler is the rank the others wait for, not the one with the longest step.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/analyze/summary.hpp"

namespace nsel {

struct StepAcrossWorkers {
  long long step = 0;
  std::vector<std::optional<long long>> duration_ns;  // per process, in the summaries' order
  double median_ns = 0;                               // over the processes that have the step
  std::size_t slowest = 0;                            // index of the slowest process
  // Per process: its own work, the step less its top-level communication ranges (the step
  // itself where it has none). Stragglers and percent_above_others are judged on it.
  std::vector<std::optional<long long>> work_ns;
  std::vector<std::size_t> stragglers;  // indexes, most work first
  // Per process: the median of the other processes' work (median_of_others), and how far its
  // own is above it (percent_above_others).
  std::vector<std::optional<double>> others_median_ns;
  std::vector<std::optional<double>> percent_above_others;
  // Per process, when it has GPU data: how long it waited in communication kernels this step,
  // estimated as its communication time minus the shortest among the processes that have it
  // (a collective lasts until the last rank arrives, so the fastest one waited least).
  std::vector<std::optional<long long>> communication_wait_ns;
  // Medians across the processes with GPU data (every step of that number, cut ones too, as the
  // page's band shows them): the GPU's busy time and its communication time, each as a fraction
  // of the process's own step, and the communication wait in ns.
  std::optional<double> median_gpu_busy_share;
  std::optional<double> median_communication_share;
  std::optional<double> median_communication_wait_ns;
};

// The straggler of a run: the process that is a straggler in the most steps (of equal counts,
// the one further above the others on average over those steps).
struct RunStraggler {
  std::size_t process = 0;  // index in the summaries
  std::size_t slow_steps = 0;
  std::size_t steps = 0;                 // of its steps compared
  double mean_percent_above_others = 0;  // of its work, over its slow steps
};

struct StepComparison {
  double straggler_percent = 0;
  std::vector<StepAcrossWorkers> steps;  // by step number
  // The names of the communication ranges taken out of the steps' work, sorted; empty when no
  // step has one (work is then the step time).
  std::vector<std::string> communication_ranges;
  std::optional<RunStraggler> straggler;  // none when no process is a straggler in any step
};

// A top-level range in which a process waits for the others: its name, in any case and with
// '-', '_', '.' and spaces left out, holds a collective's name (allreduce, allgather,
// reducescatter, alltoall, broadcast, barrier).
bool is_communication_range(std::string_view name);

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

// `straggler_percent`: how far above the median of the other workers' a worker's work must be
// (10 = 10 %).
StepComparison compare_steps(const std::vector<ProcessSummary>& processes,
                             double straggler_percent);

}  // namespace nsel
