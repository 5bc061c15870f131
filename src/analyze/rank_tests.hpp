// The two tests behind nsel diff's verdicts (an analyze internal): the Mann-Whitney U test on
// per-step values and Welch's t-test on instance durations given by summary statistics.
#pragma once

#include <cstddef>
#include <vector>

namespace nsel::analyze {

// Both sides at most this many values together, and no ties: the exact distribution of U.
inline constexpr std::size_t kExactMannWhitneyAtMost = 40;

// Two-sided p-value of the Mann-Whitney U test: exact by counting the arrangements of the
// ranks when the samples are small and have no ties, else the normal approximation with the
// tie correction of the variance and a continuity correction of 1/2. 1 for an empty side.
double mann_whitney_two_sided_p(const std::vector<double>& a, const std::vector<double>& b);

// The statistic U of `a`: the pairs (x in a, y in b) with x > y, a tie counting 1/2.
double mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// One side of Welch's test, as summary tables give it.
struct SampleMoments {
  double count = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1 in the denominator)
};

// Welch's test needs two instances a side and some spread: without spread the standard error
// is zero and the statistic means nothing.
bool welch_testable(const SampleMoments& a, const SampleMoments& b);

// Two-sided p-value of Welch's t-test on the means, with the Welch-Satterthwaite degrees of
// freedom; 1 ("not tested") when not welch_testable.
double welch_two_sided_p(const SampleMoments& a, const SampleMoments& b);

// P(|T| >= |t|) for Student's t with `degrees_of_freedom` (> 0, not necessarily whole).
double student_t_two_sided_p(double t, double degrees_of_freedom);

// The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1].
double regularized_incomplete_beta(double a, double b, double x);

}  // namespace nsel::analyze
