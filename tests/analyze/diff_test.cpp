// nsel diff's engine on made-up runs whose answers are known by construction, and its two
// tests against values computed independently (by enumeration here, or closed forms).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "analyze/rank_tests.hpp"
#include "exact_stats.hpp"
#include "nsel/analyze/diff.hpp"
#include "nsel/core/error.hpp"

namespace {

using nsel::ChangeVerdict;

constexpr double kStepNs = 100e6;  // 100 ms

nsel::StepSummary step_of(long long number, long long start, long long duration) {
  nsel::StepSummary s;
  s.step = number;
  s.start_ns = start;
  s.end_ns = start + duration;
  return s;
}

// A process whose step n (from 1) lasts durations[n - 1].
nsel::ProcessSummary process(const std::string& worker, std::optional<long long> rank,
                             long long pid, const std::vector<double>& durations) {
  nsel::ProcessSummary p;
  p.identity.worker = worker;
  p.identity.rank = rank;
  p.identity.pid = pid;
  p.report = worker + "_" + std::to_string(pid) + ".nsys-rep";
  p.has_nvtx = true;
  long long start = 0;
  for (std::size_t i = 0; i < durations.size(); ++i) {
    const auto d = static_cast<long long>(std::llround(durations[i]));
    p.steps.push_back(step_of(static_cast<long long>(i) + 1, start, d));
    start += d + 1000;
  }
  return p;
}

nsel::ReportSet run_of(std::vector<nsel::ProcessSummary> processes) {
  nsel::ReportSet set;
  std::sort(processes.begin(), processes.end(),
            [](const auto& a, const auto& b) { return a.identity.label() < b.identity.label(); });
  set.processes = std::move(processes);
  return set;
}

// durations[rank][step]: each within +-3 % of 100 ms, drawn independently.
using Grid = std::vector<std::vector<double>>;
Grid independent_spread(std::mt19937& random, std::size_t ranks, std::size_t steps) {
  std::uniform_real_distribution<double> spread(-0.03, 0.03);
  Grid out(ranks, std::vector<double>(steps));
  for (auto& row : out) {
    for (double& d : row) d = kStepNs * (1 + spread(random));
  }
  return out;
}

// Ranks of a synchronous job: a step's time is mostly the step's (+-3 %), each rank within
// +-0.2 % of it.
Grid synchronous_spread(std::mt19937& random, std::size_t ranks, std::size_t steps) {
  std::uniform_real_distribution<double> step_spread(-0.03, 0.03);
  std::uniform_real_distribution<double> rank_spread(-0.002, 0.002);
  Grid out(ranks, std::vector<double>(steps));
  for (std::size_t s = 0; s < steps; ++s) {
    const double step = kStepNs * (1 + step_spread(random));
    for (std::size_t r = 0; r < ranks; ++r) out[r][s] = step * (1 + rank_spread(random));
  }
  return out;
}

nsel::ReportSet run_of_grid(const Grid& grid, long long first_pid) {
  std::vector<nsel::ProcessSummary> processes;
  for (std::size_t r = 0; r < grid.size(); ++r) {
    processes.push_back(process("dtensor_policy_worker", static_cast<long long>(r),
                                first_pid + static_cast<long long>(r), grid[r]));
  }
  return run_of(std::move(processes));
}

Grid scaled(Grid grid, double factor, std::optional<std::size_t> only_rank = std::nullopt) {
  for (std::size_t r = 0; r < grid.size(); ++r) {
    if (only_rank && r != *only_rank) continue;
    for (double& d : grid[r]) d *= factor;
  }
  return grid;
}

const nsel::ProcessPairDiff& pair_with_key(const nsel::RunDiff& diff, const std::string& key) {
  for (const auto& p : diff.pairs) {
    if (p.key == key) return p;
  }
  throw std::runtime_error("no pair " + key);
}

double choose(int n, int k) {
  double out = 1;
  for (int i = 1; i <= k; ++i) out = out * (n - k + i) / i;
  return out;
}

// The exact two-sided p of U by trying every way to split the pooled values into sides of
// the two sizes (no ties): twice the smaller tail, at most 1.
double enumerated_mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  const double observed = nsel::analyze::mann_whitney_u(a, b);
  std::vector<bool> in_a(all.size(), false);
  std::fill(in_a.begin(), in_a.begin() + static_cast<long>(a.size()), true);
  std::sort(in_a.begin(), in_a.end());
  double at_most = 0, at_least = 0, splits = 0;
  do {
    std::vector<double> x, y;
    for (std::size_t i = 0; i < all.size(); ++i) (in_a[i] ? x : y).push_back(all[i]);
    double u = 0;
    for (double xi : x) {
      for (double yi : y) u += xi > yi ? 1 : 0;
    }
    splits += 1;
    if (u <= observed) at_most += 1;
    if (u >= observed) at_least += 1;
  } while (std::next_permutation(in_a.begin(), in_a.end()));
  return std::min(1.0, 2 * std::min(at_most, at_least) / splits);
}

}  // namespace

// ---- the tests -------------------------------------------------------------------------------

TEST(RankTests, ExactMannWhitneyMatchesEnumeration) {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> value(0, 1);
  for (auto [n, m] : {std::pair{3, 4}, std::pair{5, 5}, std::pair{6, 8}, std::pair{1, 7}}) {
    std::vector<double> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(m));
    for (double& x : a) x = value(random);
    for (double& y : b) y = value(random) + 0.2;  // some shift, so p is not always large
    EXPECT_NEAR(nsel::analyze::mann_whitney_two_sided_p(a, b), enumerated_mann_whitney_p(a, b),
                1e-12)
        << n << " vs " << m;
  }
}

TEST(RankTests, SeparatedSamplesGiveTwoOverTheSplits) {
  // 20 values all below 20 others: U = 0, and only one split of C(40, 20) is as extreme on
  // each side.
  std::vector<double> a(20), b(20);
  std::iota(a.begin(), a.end(), 1.0);
  std::iota(b.begin(), b.end(), 101.0);
  EXPECT_DOUBLE_EQ(nsel::analyze::mann_whitney_u(a, b), 0);
  EXPECT_NEAR(nsel::analyze::mann_whitney_two_sided_p(a, b), 2 / choose(40, 20), 1e-22);
  EXPECT_EQ(nsel::analyze::mann_whitney_two_sided_p({}, b), 1);
}

TEST(RankTests, NormalApproximationWithTies) {
  // a = {1, 2, 2, 3}, b = {2, 3, 4, 5, 5}: ties, so the normal approximation. By hand:
  // U(a) = 0 + (0.5 + 0.5 + 0.5 + 0 ... ) pairs: 1 beats none; each 2 ties b's 2 (0.5);
  // 3 beats b's 2 (1) and ties b's 3 (0.5): U = 0.5 + 0.5 + 1.5 = 2.5.
  // mean n m / 2 = 10; tie groups {2 x3, 3 x2, 5 x2}: sum t^3 - t = 24 + 6 + 6 = 36;
  // variance = 20 / 12 * (10 - 36 / (9 * 8)) = 20 / 12 * 9.5 = 15.8333...;
  // z = (7.5 - 0.5) / sqrt(15.8333) = 1.7592; p = erfc(z / sqrt 2).
  const std::vector<double> a = {1, 2, 2, 3};
  const std::vector<double> b = {2, 3, 4, 5, 5};
  EXPECT_DOUBLE_EQ(nsel::analyze::mann_whitney_u(a, b), 2.5);
  const double z = 7.0 / std::sqrt(20.0 / 12.0 * 9.5);
  EXPECT_NEAR(nsel::analyze::mann_whitney_two_sided_p(a, b), std::erfc(z / std::sqrt(2.0)), 1e-12);
  EXPECT_NEAR(nsel::analyze::mann_whitney_two_sided_p(a, b), 0.078541, 1e-5);
  // Every value equal: nothing to tell the sides apart.
  EXPECT_EQ(nsel::analyze::mann_whitney_two_sided_p({4, 4, 4}, {4, 4, 4, 4}), 1);
}

TEST(RankTests, IncompleteBetaClosedForms) {
  using nsel::analyze::regularized_incomplete_beta;
  for (double x : {0.05, 0.3, 0.5, 0.77, 0.99}) {
    EXPECT_NEAR(regularized_incomplete_beta(1, 1, x), x, 1e-13);
    EXPECT_NEAR(regularized_incomplete_beta(3.5, 1, x), std::pow(x, 3.5), 1e-13);
    EXPECT_NEAR(regularized_incomplete_beta(1, 4, x), 1 - std::pow(1 - x, 4), 1e-13);
    // I_x(2, 2) = 3x^2 - 2x^3.
    EXPECT_NEAR(regularized_incomplete_beta(2, 2, x), 3 * x * x - 2 * x * x * x, 1e-13);
  }
  EXPECT_EQ(regularized_incomplete_beta(2, 3, 0), 0);
  EXPECT_EQ(regularized_incomplete_beta(2, 3, 1), 1);
}

TEST(RankTests, StudentTClosedFormsAndIntegration) {
  using nsel::analyze::student_t_two_sided_p;
  for (double t : {0.1, 1.0, 2.5, 12.0}) {
    // One degree of freedom (Cauchy): 1 - 2 atan(t) / pi; two: 1 - t / sqrt(2 + t^2).
    EXPECT_NEAR(student_t_two_sided_p(t, 1), 1 - 2 * std::atan(t) / M_PI, 1e-12);
    EXPECT_NEAR(student_t_two_sided_p(-t, 2), 1 - t / std::sqrt(2 + t * t), 1e-12);
  }
  // Fractional degrees of freedom, by Simpson's rule on the density with Python's math.lgamma
  // (200,000 intervals).
  EXPECT_NEAR(student_t_two_sided_p(1.7, 7.3), 0.13116536835309967, 1e-9);
  EXPECT_NEAR(student_t_two_sided_p(0.4, 3.5), 0.7123448935344425, 1e-9);
  EXPECT_NEAR(student_t_two_sided_p(2.5, 30.0), 0.018115649068085715, 1e-9);
  // Kernels have many instances: with a million degrees of freedom t is all but normal,
  // P(|Z| >= t) = erfc(t / sqrt 2), relatively within about t^4 / (4 df).
  for (double t : {0.5, 1.5, 2.5, 5.0}) {
    const double normal = std::erfc(t / std::sqrt(2.0));
    EXPECT_NEAR(student_t_two_sided_p(t, 1e6), normal, normal * 1e-3) << t;
  }
}

TEST(RankTests, WelchFromSummaryStatistics) {
  // a = {10.1, 9.8, 10.4, 10.0, 9.7, 10.3}, b = {10.9, 11.2, 10.6, 11.5, 10.8, 11.0, 11.3}:
  // Python's statistics gives their means and sample deviations; t = 6.12904, Welch-
  // Satterthwaite df = 10.979, and Simpson's rule on the t density p = 7.48577e-05.
  const nsel::analyze::SampleMoments a{6, 10.05, 0.2738612787525833};
  const nsel::analyze::SampleMoments b{7, 11.042857142857143, 0.3101458950082625};
  EXPECT_NEAR(nsel::analyze::welch_two_sided_p(a, b), 7.485766858950083e-05, 1e-10);
  EXPECT_NEAR(nsel::analyze::welch_two_sided_p(b, a), 7.485766858950083e-05, 1e-10);
  // Not testable: one instance, or no spread on either side.
  EXPECT_FALSE(nsel::analyze::welch_testable({1, 10, 0}, b));
  EXPECT_EQ(nsel::analyze::welch_two_sided_p({1, 10, 0}, b), 1);
  EXPECT_FALSE(nsel::analyze::welch_testable({5, 10, 0}, {5, 12, 0}));
  EXPECT_EQ(nsel::analyze::welch_two_sided_p({5, 10, 0}, {5, 12, 0}), 1);
}

TEST(DiffDistribution, QuartilesInterpolateBetweenOrderStatistics) {
  // Sorted 1 2 3 4 10: positions (n - 1) q = 1, 2, 3.
  const nsel::Distribution d = nsel::distribution_of({10, 3, 1, 4, 2});
  EXPECT_EQ(d.count, 5u);
  EXPECT_DOUBLE_EQ(d.q1, 2);
  EXPECT_DOUBLE_EQ(d.median, 3);
  EXPECT_DOUBLE_EQ(d.q3, 4);
  EXPECT_DOUBLE_EQ(d.min, 1);
  EXPECT_DOUBLE_EQ(d.max, 10);
  // 1 2 3 4: positions 0.75, 1.5, 2.25.
  const nsel::Distribution even = nsel::distribution_of({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(even.q1, 1.75);
  EXPECT_DOUBLE_EQ(even.median, 2.5);
  EXPECT_DOUBLE_EQ(even.q3, 3.25);
  EXPECT_EQ(nsel::distribution_of({}).count, 0u);
}

TEST(DiffVerdict, NoChangeBetweenTwoRunsOfTheSameSpread) {
  std::mt19937 random(2024);
  const Grid baseline = independent_spread(random, 8, 20);
  const Grid candidate = independent_spread(random, 8, 20);
  const nsel::RunDiff diff =
      nsel::diff_runs(run_of_grid(baseline, 100), run_of_grid(candidate, 200), {});
  ASSERT_EQ(diff.pairs.size(), 8u);
  EXPECT_TRUE(diff.unpaired.empty());
  const nsel::Change& step = diff.step_time().change;
  EXPECT_EQ(diff.step_time().kind, nsel::MetricDiff::Kind::step);
  EXPECT_EQ(step.verdict, ChangeVerdict::unchanged) << step.p_value << " " << step.change_percent;
  EXPECT_GT(step.p_value, 0.01);
  EXPECT_LT(std::fabs(step.change_percent), 3);
  EXPECT_EQ(step.baseline_steps.count, 20u);  // one tested value per step
  EXPECT_EQ(step.baseline.count, 160u);       // every (rank, step)
  EXPECT_EQ(diff.steps.size(), 20u);
  EXPECT_EQ(nsel::judge_gate(diff, 0).outcome, nsel::GateOutcome::passed);
  for (const auto& p : diff.pairs) EXPECT_EQ(p.paired_by, "identity");
}

TEST(DiffVerdict, EveryStepTenPercentSlower) {
  std::mt19937 random(7);
  const Grid baseline = independent_spread(random, 8, 20);
  const nsel::RunDiff diff =
      nsel::diff_runs(run_of_grid(baseline, 100), run_of_grid(scaled(baseline, 1.1), 200), {});
  const nsel::Change& step = diff.step_time().change;
  EXPECT_EQ(step.verdict, ChangeVerdict::slower);
  // Every value times 1.1: so is each median (up to the rounding to whole ns).
  EXPECT_NEAR(step.change_percent, 10, 1e-6);
  // The per-step medians lie within 97..103 ms and 106.7..113.3 ms: no overlap, U = 0.
  EXPECT_NEAR(step.p_value, 2 / choose(40, 20), 1e-20);
  EXPECT_EQ(nsel::judge_gate(diff, 5).outcome, nsel::GateOutcome::regression);
  EXPECT_EQ(nsel::judge_gate(diff, 15).outcome, nsel::GateOutcome::passed);
  for (const auto& p : diff.pairs) {
    EXPECT_EQ(p.step.verdict, ChangeVerdict::slower);
    EXPECT_FALSE(p.out_of_line) << p.key;
    EXPECT_NEAR(p.change_vs_job_points, 0, 1e-3);
  }
  ASSERT_EQ(diff.steps.size(), 20u);
  EXPECT_NEAR(diff.steps[4].change_percent, 10, 1e-6);
  EXPECT_EQ(diff.steps[4].step, 5);
}

TEST(DiffVerdict, OneSlowRankLeavesTheJobUnchanged) {
  std::mt19937 random(5);
  const Grid baseline = synchronous_spread(random, 8, 20);
  const Grid candidate = scaled(synchronous_spread(random, 8, 20), 1.3, 3);
  const nsel::RunDiff diff =
      nsel::diff_runs(run_of_grid(baseline, 100), run_of_grid(candidate, 200), {});
  EXPECT_EQ(diff.step_time().change.verdict, ChangeVerdict::unchanged)
      << diff.step_time().change.p_value << " " << diff.step_time().change.change_percent;
  const auto& slow = pair_with_key(diff, "dtensor_policy_worker rank 3");
  EXPECT_EQ(slow.step.verdict, ChangeVerdict::slower);
  EXPECT_TRUE(slow.out_of_line);
  EXPECT_GT(slow.change_vs_job_points, 20);
  for (const auto& p : diff.pairs) {
    if (p.key == slow.key) continue;
    EXPECT_FALSE(p.out_of_line) << p.key;
  }
}

TEST(DiffVerdict, OneRankSlowerWhileTheRestGotFaster) {
  std::mt19937 random(9);
  const Grid baseline = synchronous_spread(random, 8, 20);
  const Grid candidate = scaled(scaled(baseline, 0.9), 1.1 / 0.9, 3);  // rank 3: 1.1
  const nsel::RunDiff diff =
      nsel::diff_runs(run_of_grid(baseline, 100), run_of_grid(candidate, 200), {});
  const nsel::Change& job = diff.step_time().change;
  EXPECT_EQ(job.verdict, ChangeVerdict::faster);
  EXPECT_NEAR(job.change_percent, -10, 0.5);  // 7 of 8 ranks decide each step's median
  const auto& odd = pair_with_key(diff, "dtensor_policy_worker rank 3");
  EXPECT_EQ(odd.step.verdict, ChangeVerdict::slower);
  EXPECT_NEAR(odd.step.change_percent, 10, 1e-6);
  EXPECT_TRUE(odd.out_of_line);
  EXPECT_DOUBLE_EQ(odd.change_vs_job_points, odd.step.change_percent - job.change_percent);
  for (const auto& p : diff.pairs) {
    if (p.key == odd.key) continue;
    EXPECT_EQ(p.step.verdict, ChangeVerdict::faster) << p.key;
    EXPECT_FALSE(p.out_of_line) << p.key;
  }
}

TEST(DiffPairing, MissingRanksAreListedUnpaired) {
  const std::vector<double> steps(6, kStepNs);
  const nsel::ReportSet baseline = run_of({process("w", 0, 10, steps), process("w", 1, 11, steps),
                                           process("w", 2, 12, steps), process("w", 3, 13, steps)});
  const nsel::ReportSet candidate =
      run_of({process("w", 0, 20, steps), process("w", 1, 21, steps), process("w", 2, 22, steps),
              process("w", 4, 24, steps)});
  const nsel::RunDiff diff = nsel::diff_runs(baseline, candidate, {});
  ASSERT_EQ(diff.pairs.size(), 3u);
  EXPECT_EQ(diff.pairs[0].key, "w rank 0");
  EXPECT_EQ(diff.pairs[2].key, "w rank 2");
  EXPECT_EQ(diff.pairs[1].baseline.pid, 11);
  EXPECT_EQ(diff.pairs[1].candidate.pid, 21);
  ASSERT_EQ(diff.unpaired.size(), 2u);
  EXPECT_EQ(diff.unpaired[0].side, "baseline");
  EXPECT_EQ(diff.unpaired[0].key, "w rank 3");
  EXPECT_EQ(diff.unpaired[0].label, "w/13");
  EXPECT_EQ(diff.unpaired[1].side, "candidate");
  EXPECT_EQ(diff.unpaired[1].key, "w rank 4");
  EXPECT_EQ(diff.baseline.processes, 4u);
}

TEST(DiffPairing, SharedKeysPairInLabelOrder) {
  const std::vector<double> steps(6, kStepNs);
  // No ranks: the key is the worker alone, three processes in the baseline, two in the
  // candidate; labels w/100 < w/200 < w/300 and w/400 < w/50 (as text).
  const nsel::ReportSet baseline =
      run_of({process("w", std::nullopt, 300, steps), process("w", std::nullopt, 100, steps),
              process("w", std::nullopt, 200, steps)});
  const nsel::ReportSet candidate =
      run_of({process("w", std::nullopt, 50, steps), process("w", std::nullopt, 400, steps)});
  const nsel::RunDiff diff = nsel::diff_runs(baseline, candidate, {});
  ASSERT_EQ(diff.pairs.size(), 2u);
  EXPECT_EQ(diff.pairs[0].key, "w");
  EXPECT_EQ(diff.pairs[0].paired_by, "order");
  EXPECT_EQ(diff.pairs[0].baseline.pid, 100);
  EXPECT_EQ(diff.pairs[0].candidate.pid, 400);
  EXPECT_EQ(diff.pairs[1].baseline.pid, 200);
  EXPECT_EQ(diff.pairs[1].candidate.pid, 50);
  ASSERT_EQ(diff.unpaired.size(), 1u);
  EXPECT_EQ(diff.unpaired[0].label, "w/300");
}

TEST(DiffPairing, TheOnlyProcessOfEachSidePairsWhateverItsKey) {
  const std::vector<double> steps(6, kStepNs);
  const nsel::RunDiff diff =
      nsel::diff_runs(run_of({process("4gpu_baseline", std::nullopt, 0, steps)}),
                      run_of({process("4gpu_bucketcap100mb", std::nullopt, 0, steps)}), {});
  ASSERT_EQ(diff.pairs.size(), 1u);
  EXPECT_EQ(diff.pairs[0].paired_by, "only process");
  EXPECT_EQ(diff.pairs[0].key, "4gpu_baseline / 4gpu_bucketcap100mb");
  EXPECT_TRUE(diff.unpaired.empty());
  // Two processes a side with other keys do not pair.
  const nsel::RunDiff two =
      nsel::diff_runs(run_of({process("a", 0, 1, steps), process("a", 1, 2, steps)}),
                      run_of({process("b", 0, 3, steps), process("b", 1, 4, steps)}), {});
  EXPECT_TRUE(two.pairs.empty());
  EXPECT_EQ(two.unpaired.size(), 4u);
}

// Nothing paired: the step time names what each side had (not missing steps), and the gate
// never passes on no evidence.
TEST(DiffPairing, NothingPairedIsSaidAndFailsTheGate) {
  const std::vector<double> steps(6, kStepNs);
  const nsel::RunDiff diff =
      nsel::diff_runs(run_of({process("a", 0, 1, steps), process("a", 1, 2, steps)}),
                      run_of({process("b", 0, 3, steps), process("b", 1, 4, steps)}), {});
  ASSERT_TRUE(diff.pairs.empty());
  EXPECT_EQ(diff.step_time().change.verdict, nsel::ChangeVerdict::inconclusive);
  EXPECT_EQ(diff.step_time().change.reason,
            "no process could be paired by worker,rank: the baseline has 'a rank 0', 'a rank 1', "
            "the candidate 'b rank 0', 'b rank 1'");
  EXPECT_EQ(nsel::judge_gate(diff, 5).outcome, nsel::GateOutcome::no_evidence);
  EXPECT_EQ(nsel::judge_gate(diff, 1e6).outcome, nsel::GateOutcome::no_evidence);
  EXPECT_EQ(nsel::judge_gate(diff, 5).reason, diff.step_time().change.reason);
}

TEST(DiffPairing, NodeCountsOnlyWhenAsked) {
  const std::vector<double> steps(6, kStepNs);
  nsel::ProcessSummary b = process("w", 0, 1, steps);
  b.identity.node = "n1";
  nsel::ProcessSummary b2 = process("w", 1, 2, steps);
  b2.identity.node = "n1";
  nsel::ProcessSummary c = process("w", 0, 3, steps);
  c.identity.node = "n2";
  nsel::ProcessSummary c2 = process("w", 1, 4, steps);
  c2.identity.node = "n1";
  const nsel::ReportSet baseline = run_of({b, b2});
  const nsel::ReportSet candidate = run_of({c, c2});
  EXPECT_EQ(nsel::diff_runs(baseline, candidate, {}).pairs.size(), 2u);
  nsel::DiffOptions options;
  options.pairing = nsel::parse_pairing_rule("worker,rank,node");
  const nsel::RunDiff diff = nsel::diff_runs(baseline, candidate, options);
  ASSERT_EQ(diff.pairs.size(), 1u);
  EXPECT_EQ(diff.pairs[0].key, "w rank 1 node n1");
  ASSERT_EQ(diff.unpaired.size(), 2u);
  EXPECT_EQ(diff.unpaired[0].key, "w rank 0 node n1");
  EXPECT_EQ(diff.unpaired[1].key, "w rank 0 node n2");
}

TEST(DiffPairing, StepsOnOneSideOnlyAreListed) {
  const nsel::RunDiff diff =
      nsel::diff_runs(run_of({process("w", 0, 1, std::vector(8, kStepNs))}),
                      run_of({process("w", 0, 2, std::vector(6, kStepNs))}), {});
  ASSERT_EQ(diff.pairs.size(), 1u);
  EXPECT_EQ(diff.pairs[0].steps_only_in_baseline, (std::vector<long long>{7, 8}));
  EXPECT_TRUE(diff.pairs[0].steps_only_in_candidate.empty());
  EXPECT_EQ(diff.steps_only_in_baseline, (std::vector<long long>{7, 8}));
  EXPECT_EQ(diff.steps.size(), 6u);
}

TEST(DiffVerdict, TooFewStepsIsInconclusiveWithTheReason) {
  const nsel::RunDiff three = nsel::diff_runs(run_of({process("w", 0, 1, {1e8, 1e8, 1e8})}),
                                              run_of({process("w", 0, 2, {2e8, 2e8, 2e8})}), {});
  EXPECT_EQ(three.step_time().change.verdict, ChangeVerdict::inconclusive);
  EXPECT_EQ(three.step_time().change.reason, "3 steps in each run, at least 5 needed");
  EXPECT_EQ(three.step_time().change.p_value, 1);
  EXPECT_DOUBLE_EQ(three.step_time().change.change_percent, 100);
  // A gate never passes on no evidence (before, this one passed: exit 0 on 3 steps that were
  // twice as slow).
  EXPECT_EQ(nsel::judge_gate(three, 5).outcome, nsel::GateOutcome::no_evidence);
  EXPECT_EQ(nsel::judge_gate(three, 5).reason, "3 steps in each run, at least 5 needed");
  EXPECT_EQ(three.pairs[0].step.verdict, ChangeVerdict::inconclusive);

  const nsel::RunDiff none = nsel::diff_runs(run_of({process("w", 0, 1, {})}),
                                             run_of({process("w", 0, 2, std::vector(6, 1e8))}), {});
  EXPECT_EQ(none.step_time().change.verdict, ChangeVerdict::inconclusive);
  EXPECT_EQ(none.step_time().change.reason, "0 steps in the baseline, at least 5 needed");
  EXPECT_EQ(none.steps_only_in_candidate.size(), 6u);

  nsel::DiffOptions options;
  options.min_steps = 2;
  const nsel::RunDiff few = nsel::diff_runs(run_of({process("w", 0, 1, {1e8, 1e8, 1e8})}),
                                            run_of({process("w", 0, 2, {2e8, 2e8, 2e8})}), options);
  EXPECT_NE(few.step_time().change.verdict, ChangeVerdict::inconclusive);
}

// Two runs whose steps have no number in common: the reason says so (before: "2 steps in each
// run, at least 5 needed", while no step was compared at all), and the gate saw no evidence.
TEST(DiffVerdict, NoStepInCommonIsSaidAndNeverPassesTheGate) {
  nsel::ProcessSummary later = process("w", 0, 2, {2e8, 2e8});
  for (nsel::StepSummary& step : later.steps) step.step += 2;  // steps 3 and 4
  nsel::DiffOptions options;
  options.gate_percent = 5;
  const nsel::RunDiff diff =
      nsel::diff_runs(run_of({process("w", 0, 1, {1e8, 1e8})}), run_of({later}), options);
  ASSERT_EQ(diff.pairs.size(), 1u);
  EXPECT_TRUE(diff.steps.empty());
  EXPECT_EQ(diff.step_time().change.verdict, ChangeVerdict::inconclusive);
  const std::string reason =
      "no step in common: the baseline has 2 steps and the candidate 2, none with the same number";
  EXPECT_EQ(diff.step_time().change.reason, reason);
  EXPECT_EQ(diff.pairs[0].step.reason, reason);
  ASSERT_TRUE(diff.gate.has_value());
  EXPECT_EQ(diff.gate->outcome, nsel::GateOutcome::no_evidence);
  EXPECT_EQ(diff.gate->reason, reason);
  EXPECT_EQ(diff.gate->percent, 5);
  // Without --gate, no gate result.
  EXPECT_FALSE(nsel::diff_runs(run_of({process("w", 0, 1, {1e8, 1e8})}), run_of({later}), {})
                   .gate.has_value());
}

TEST(DiffMetrics, GpuMetricsAndRangesInOrder) {
  // Two ranks, 6 steps; "forward" takes 60 % of each step, "backward" 30 %, "optimizer" only in
  // the candidate (5 ms); the candidate's communication doubled.
  std::vector<nsel::ProcessSummary> baseline, candidate;
  for (long long rank : {0, 1}) {
    for (bool is_candidate : {false, true}) {
      nsel::ProcessSummary p =
          process("w", rank, rank + (is_candidate ? 10 : 0), std::vector(6, kStepNs));
      p.has_gpu = true;
      for (auto& s : p.steps) {
        s.shares = {{"forward", 60'000'000, 0}, {"backward", 30'000'000, 0}};
        if (is_candidate) s.shares.push_back({"optimizer", 5'000'000, 0});
        s.gpu_busy_ns = 80'000'000;
        s.communication_ns = is_candidate ? 20'000'000 : 10'000'000;
        s.compute_ns = *s.gpu_busy_ns - *s.communication_ns;
      }
      (is_candidate ? candidate : baseline).push_back(std::move(p));
    }
  }
  const nsel::RunDiff diff = nsel::diff_runs(run_of(baseline), run_of(candidate), {});
  std::vector<std::string> names;
  for (const auto& m : diff.metrics) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"step", "communication", "compute", "GPU idle",
                                             "forward", "backward", "optimizer"}));
  const auto& communication = diff.metrics[1].change;
  EXPECT_EQ(communication.verdict, ChangeVerdict::slower);
  EXPECT_DOUBLE_EQ(communication.change_percent, 100);
  // Every value equal on each side: all 12 tied, the normal approximation; U = 0 of 36,
  // the tie-corrected variance 36/12 (13 - (6^3 - 6) 2 / (12 * 11)) = 29.4545...
  EXPECT_NEAR(communication.p_value,
              std::erfc((18 - 0.5) / std::sqrt(3 * (13 - 420.0 / 132)) / std::sqrt(2.0)), 1e-12);
  EXPECT_EQ(diff.metrics[0].change.verdict, ChangeVerdict::unchanged);
  EXPECT_EQ(diff.metrics[3].change.verdict, ChangeVerdict::unchanged);  // idle 20 ms in both
  EXPECT_EQ(diff.metrics[6].change.baseline_steps.median, 0);           // absent: 0 ns
  EXPECT_EQ(diff.metrics[6].change.verdict, ChangeVerdict::slower);
  ASSERT_TRUE(diff.pairs[0].communication.has_value());
  EXPECT_EQ(diff.pairs[0].communication->verdict, ChangeVerdict::slower);
  EXPECT_DOUBLE_EQ(diff.pairs[0].compute->change_percent, -100.0 / 7);
}

namespace {

nsel::DurationStats stats_of(std::vector<long long> v) {
  return nsel::test::exact_stats(v);
}

std::vector<long long> instances(std::mt19937& random, std::size_t count, long long around) {
  std::uniform_int_distribution<long long> spread(around * 9 / 10, around * 11 / 10);
  std::vector<long long> out(count);
  for (auto& x : out) x = spread(random);
  return out;
}

nsel::KernelRow kernel_row(const std::string& name, const std::string& grid,
                           const std::vector<long long>& values) {
  nsel::KernelRow r;
  r.name = name;
  r.grid = grid;
  r.block = "256 1 1";
  r.communication = nsel::is_communication_kernel(name);
  r.stats = stats_of(values);
  return r;
}

}  // namespace

TEST(DiffKernels, CountsAddAndPooledStatisticsAreExact) {
  const std::string all_reduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs)";
  const std::string gemm = "sm90_xmma_gemm_bf16bf16_bf16f32";
  std::mt19937 random(3);
  // Baseline AllReduce: 472 instances over two ranks and two grids; candidate: 295.
  const auto b0a = instances(random, 150, 40'000), b0b = instances(random, 90, 90'000);
  const auto b1a = instances(random, 160, 40'000), b1b = instances(random, 72, 90'000);
  const auto c0 = instances(random, 150, 40'000), c1 = instances(random, 145, 41'000);
  // GEMM: the same count, 20 % longer in the candidate.
  const auto gb0 = instances(random, 500, 100'000), gb1 = instances(random, 500, 100'000);
  const auto gc0 = instances(random, 500, 120'000), gc1 = instances(random, 500, 120'000);
  const std::vector<double> steps(6, kStepNs);
  nsel::ProcessSummary pb0 = process("w", 0, 1, steps), pb1 = process("w", 1, 2, steps);
  nsel::ProcessSummary pc0 = process("w", 0, 3, steps), pc1 = process("w", 1, 4, steps);
  pb0.kernels = {kernel_row(all_reduce, "2 1 1", b0a), kernel_row(all_reduce, "4 1 1", b0b),
                 kernel_row(gemm, "132 1 1", gb0)};
  pb1.kernels = {kernel_row(all_reduce, "2 1 1", b1a), kernel_row(all_reduce, "4 1 1", b1b),
                 kernel_row(gemm, "132 1 1", gb1)};
  pc0.kernels = {kernel_row(all_reduce, "2 1 1", c0), kernel_row(gemm, "132 1 1", gc0)};
  pc1.kernels = {kernel_row(all_reduce, "2 1 1", c1), kernel_row(gemm, "132 1 1", gc1)};
  const nsel::RunDiff diff = nsel::diff_runs(run_of({pb0, pb1}), run_of({pc0, pc1}), {});
  ASSERT_EQ(diff.kernels.size(), 2u);
  const auto find = [&](const std::string& name) {
    return *std::find_if(diff.kernels.begin(), diff.kernels.end(),
                         [&](const auto& k) { return k.name == name; });
  };
  const nsel::TotalsDiff reduce = find(all_reduce);
  EXPECT_TRUE(reduce.communication);
  EXPECT_EQ(reduce.baseline.count, 472);
  EXPECT_EQ(reduce.candidate.count, 295);
  EXPECT_EQ(reduce.count_change, -177);
  std::vector<long long> concatenated;
  for (const auto* part : {&b0a, &b0b, &b1a, &b1b}) {
    concatenated.insert(concatenated.end(), part->begin(), part->end());
  }
  const nsel::DurationStats expected = stats_of(concatenated);
  EXPECT_EQ(reduce.baseline.total, expected.total);
  EXPECT_EQ(reduce.baseline.min, expected.min);
  EXPECT_EQ(reduce.baseline.max, expected.max);
  EXPECT_DOUBLE_EQ(reduce.baseline.mean, expected.mean);
  EXPECT_NEAR(reduce.baseline.stddev, expected.stddev, expected.stddev * 1e-9);
  EXPECT_NEAR(
      reduce.total_change_percent,
      (static_cast<double>(reduce.candidate.total) / static_cast<double>(expected.total) - 1) * 100,
      1e-9);

  const nsel::TotalsDiff matmul = find(gemm);
  EXPECT_FALSE(matmul.communication);
  EXPECT_EQ(matmul.count_change, 0);
  EXPECT_EQ(matmul.mean_verdict, ChangeVerdict::slower);
  EXPECT_LT(matmul.mean_p_value, 1e-6);
  // Ordered by the time moved: the GEMM gained ~20 ms, the AllReduce lost ~10 ms.
  EXPECT_EQ(diff.kernels[0].name, gemm);
}

TEST(DiffKernels, NvtxRangesByNameAndUntestableOnes) {
  const std::vector<double> steps(6, kStepNs);
  nsel::ProcessSummary b = process("w", 0, 1, steps), c = process("w", 0, 2, steps);
  nsel::SummaryRow once;
  once.name = "setup";
  once.stats = stats_of({5'000'000});
  nsel::SummaryRow later = once;
  later.stats = stats_of({7'000'000});
  b.nvtx = {once};
  c.nvtx = {later};
  nsel::SummaryRow only;
  only.name = "eval";
  only.stats = stats_of({1'000, 2'000, 3'000});
  c.nvtx.push_back(only);
  const nsel::RunDiff diff = nsel::diff_runs(run_of({b}), run_of({c}), {});
  ASSERT_EQ(diff.nvtx.size(), 2u);
  EXPECT_EQ(diff.nvtx[0].name, "setup");  // 2 ms moved, more than eval's 6 us
  EXPECT_EQ(diff.nvtx[0].mean_verdict, ChangeVerdict::inconclusive);
  EXPECT_EQ(diff.nvtx[0].mean_p_value, 1);
  EXPECT_DOUBLE_EQ(diff.nvtx[0].total_change_percent, 40);
  EXPECT_EQ(diff.nvtx[1].baseline.count, 0);
  EXPECT_EQ(diff.nvtx[1].count_change, 3);
  EXPECT_EQ(diff.nvtx[1].total_change_percent, 0);  // nothing in the baseline to compare with
}

TEST(DiffPairingRule, ParsesAndRejectsWithExactMessages) {
  const nsel::PairingRule rank = nsel::parse_pairing_rule("rank");
  EXPECT_FALSE(rank.worker);
  EXPECT_TRUE(rank.rank);
  EXPECT_FALSE(rank.node);
  EXPECT_EQ(nsel::pairing_rule_text(nsel::parse_pairing_rule("node, worker,rank")),
            "worker,rank,node");
  EXPECT_EQ(nsel::pairing_rule_text({}), "worker,rank");
  const std::string expected =
      "; expected a comma-separated set of worker, rank and node (worker,rank)";
  const auto message = [](const std::string& text) {
    try {
      nsel::parse_pairing_rule(text);
    } catch (const nsel::Error& e) {
      EXPECT_EQ(e.exit_code(), 2);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(""), "--pair-by='': empty" + expected);
  EXPECT_EQ(message("pid"), "--pair-by='pid': unknown part 'pid'" + expected);
  EXPECT_EQ(message("rank,,worker"), "--pair-by='rank,,worker': an empty part" + expected);
  EXPECT_EQ(message("rank,rank"), "--pair-by='rank,rank': 'rank' given twice" + expected);
  EXPECT_EQ(nsel::verdict_name(ChangeVerdict::inconclusive), "inconclusive");
  EXPECT_EQ(nsel::verdict_name(ChangeVerdict::faster), "faster");
}

TEST(DiffPairing, KeysSortWithTheirNumbersAsNumbers) {
  const std::vector<double> steps(6, kStepNs);
  std::vector<nsel::ProcessSummary> baseline, candidate;
  for (long long r = 0; r < 12; ++r) {
    baseline.push_back(process("w", r, 100 + r, steps));
    if (r != 2 && r != 10) candidate.push_back(process("w", r, 200 + r, steps));
  }
  const nsel::RunDiff diff = nsel::diff_runs(run_of(baseline), run_of(candidate), {});
  std::vector<long long> ranks;
  for (const auto& p : diff.pairs) ranks.push_back(*p.baseline.rank);
  EXPECT_EQ(ranks, (std::vector<long long>{0, 1, 3, 4, 5, 6, 7, 8, 9, 11}));
  ASSERT_EQ(diff.unpaired.size(), 2u);
  EXPECT_EQ(diff.unpaired[0].key, "w rank 2");
  EXPECT_EQ(diff.unpaired[1].key, "w rank 10");
}
