// A made-up nsel diff result, built by hand (no engine involved), for the tests of its page:
// `pairs` paired ranks whose step changes follow a fixed pattern of both signs, `steps` steps
// on both sides, the step time and three range metrics, kernels (one of them communication),
// NVTX ranges, one unpaired process and one unreadable report in the baseline.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "nsel/analyze/diff.hpp"

namespace nsel::test {

inline Distribution spread(double median, double half_width) {
  Distribution d;
  d.count = 20;
  d.median = median;
  d.q1 = median - half_width / 2;
  d.q3 = median + half_width / 2;
  d.min = median - half_width;
  d.max = median + half_width;
  return d;
}

inline Change change_of(double baseline_ns, double percent, ChangeVerdict verdict, double p,
                        std::size_t steps = 20) {
  Change c;
  c.baseline = spread(baseline_ns, baseline_ns * 0.1);
  c.candidate = spread(baseline_ns * (1 + percent / 100), baseline_ns * 0.1);
  c.baseline_steps = spread(baseline_ns, baseline_ns * 0.05);
  c.candidate_steps = spread(baseline_ns * (1 + percent / 100), baseline_ns * 0.05);
  c.baseline_steps.count = c.candidate_steps.count = steps;
  c.change_percent = percent;
  c.p_value = p;
  c.verdict = verdict;
  return c;
}

// The step change of pair i: -9.5% to +10%, both signs, never zero, pair 3 of every 16 far out.
inline double pair_change(std::size_t i) {
  const double base = static_cast<double>(static_cast<long long>((i * 37) % 40) - 19) * 0.5;
  return i % 16 == 3 ? 30.0 + static_cast<double>(i % 5) : base + 0.25;
}

inline RunDiff made_up_diff(std::size_t pairs, std::size_t steps, const std::string& worker) {
  RunDiff d;
  d.baseline.paths = {"/runs/base & co/logs"};
  d.candidate.paths = {"/runs/cand/logs", "/runs/cand/more"};
  d.baseline.processes = pairs;
  d.candidate.processes = pairs + 1;
  d.baseline.failures.push_back({"/runs/base & co/logs/broken.nsys-rep", "not a <report>"});

  const double job = 2.5;
  d.metrics.push_back(
      {MetricDiff::Kind::step, "step", change_of(10e6, job, ChangeVerdict::slower, 0.0004, steps)});
  d.metrics.push_back({MetricDiff::Kind::range, "forward",
                       change_of(6e6, 1.2, ChangeVerdict::slower, 0.004, steps)});
  d.metrics.push_back({MetricDiff::Kind::range, "backward",
                       change_of(3e6, -0.3, ChangeVerdict::unchanged, 0.6, steps)});
  Change odd = change_of(40e3, 8, ChangeVerdict::inconclusive, 1, 3);
  odd.reason = "3 steps in the baseline, at least 5 needed";
  d.metrics.push_back({MetricDiff::Kind::range, "optimizer", odd});

  for (std::size_t s = 0; s < steps; ++s) {
    StepDiff step;
    step.step = static_cast<long long>(s) + 1;
    step.baseline = spread(10e6 + 1e5 * static_cast<double>(s % 3), 1e6);
    step.candidate = spread(step.baseline.median * 1.025, 1.2e6);
    step.change_percent = 2.5;
    d.steps.push_back(step);
  }
  d.steps_only_in_candidate = {static_cast<long long>(steps) + 1};

  for (std::size_t i = 0; i < pairs; ++i) {
    ProcessPairDiff p;
    p.key = worker + " rank " + std::to_string(i);
    p.baseline.worker = p.candidate.worker = worker;
    p.baseline.rank = p.candidate.rank = static_cast<long long>(i);
    p.baseline.pid = 1000 + static_cast<long long>(i);
    p.candidate.pid = 5000 + static_cast<long long>(i);
    p.paired_by = "identity";
    const double change = pair_change(i);
    const ChangeVerdict verdict = change > 1    ? ChangeVerdict::slower
                                  : change < -1 ? ChangeVerdict::faster
                                                : ChangeVerdict::unchanged;
    p.step = change_of(10e6, change, verdict, std::fabs(change) > 1 ? 0.001 : 0.5, steps);
    if (i % 2 == 0) p.compute = change_of(7e6, change / 2, verdict, 0.01, steps);
    p.change_vs_job_points = change - job;
    p.out_of_line =
        verdict == ChangeVerdict::faster || (verdict == ChangeVerdict::slower && change > 20);
    d.pairs.push_back(p);
  }
  d.unpaired.push_back({"candidate", worker + " rank " + std::to_string(pairs),
                        worker + "/" + std::to_string(5000 + pairs),
                        "/runs/cand/logs/" + worker + "_extra.nsys-rep"});

  for (int k = 0; k < 30; ++k) {
    TotalsDiff t;
    t.name = k == 1 ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, "
                      "ncclWork *)"
                    : "void at::native::elementwise_kernel<128, 4>(int, kernel " +
                          std::to_string(k) + ")";
    t.communication = k == 1;
    t.baseline.count = 100;
    t.candidate.count = 100 + k;
    t.baseline.total = 1000000 - 10000LL * k;
    t.candidate.total = t.baseline.total + 50000 - 1500LL * k;
    t.baseline.mean = static_cast<double>(t.baseline.total) / 100.0;
    t.candidate.mean = static_cast<double>(t.candidate.total) / static_cast<double>(100 + k);
    t.count_change = k;
    t.total_change_percent =
        (static_cast<double>(t.candidate.total) / static_cast<double>(t.baseline.total) - 1) * 100;
    t.mean_p_value = 0.02;
    t.mean_verdict = ChangeVerdict::unchanged;
    d.kernels.push_back(t);
  }
  for (const char* name : {"forward", "backward", "optimizer"}) {
    TotalsDiff t;
    t.name = name;
    t.baseline.count = t.candidate.count = 20;
    t.baseline.total = 60000000;
    t.candidate.total = 61000000;
    t.baseline.mean = 3e6;
    t.candidate.mean = 3.05e6;
    t.total_change_percent = 100.0 / 60;
    t.mean_p_value = 0.3;
    d.nvtx.push_back(t);
  }
  return d;
}

}  // namespace nsel::test
