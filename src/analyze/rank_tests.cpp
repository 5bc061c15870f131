#include "analyze/rank_tests.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nsel::analyze {
namespace {

// The number of arrangements of n values of one side and m of the other (no ties) whose U of
// the first side is u, for every u in [0, n m]: the recurrence
// f(n, m, u) = f(n - 1, m, u - m) + f(n, m - 1, u), by whether the largest value is the first
// side's (it then beats all m others) or not. Counts fit a double exactly: C(40, 20) < 2^53.
std::vector<double> u_counts(std::size_t n, std::size_t m) {
  // row[j] holds f(i, j, .) for the current i.
  std::vector<std::vector<double>> row(m + 1);
  for (std::size_t j = 0; j <= m; ++j) row[j] = {1.0};  // f(0, j, 0) = 1
  for (std::size_t i = 1; i <= n; ++i) {
    std::vector<std::vector<double>> next(m + 1);
    next[0] = {1.0};  // f(i, 0, 0) = 1
    for (std::size_t j = 1; j <= m; ++j) {
      std::vector<double> counts(i * j + 1, 0.0);
      const std::vector<double>& without_first = row[j];  // f(i - 1, j, .)
      for (std::size_t u = 0; u < without_first.size(); ++u) counts[u + j] += without_first[u];
      const std::vector<double>& without_second = next[j - 1];  // f(i, j - 1, .)
      for (std::size_t u = 0; u < without_second.size(); ++u) counts[u] += without_second[u];
      next[j] = std::move(counts);
    }
    row = std::move(next);
  }
  return row[m];
}

bool has_ties(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  return std::adjacent_find(all.begin(), all.end()) != all.end();
}

// The continued fraction of I_x(a, b) (modified Lentz), which converges fast for
// x < (a + 1) / (a + b + 2).
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr int kMaxTerms = 500;
  constexpr double kEpsilon = 1e-15;
  constexpr double kTiny = 1e-300;
  const auto guard = [&](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1.0;
  double d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
  double fraction = d;
  for (int m = 1; m <= kMaxTerms; ++m) {
    const double m2 = 2.0 * m;
    // The even term of the fraction, then the odd one.
    double numerator = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 / guard(1.0 + numerator * d);
    c = guard(1.0 + numerator / c);
    fraction *= d * c;
    numerator = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 / guard(1.0 + numerator * d);
    c = guard(1.0 + numerator / c);
    const double step = d * c;
    fraction *= step;
    if (std::fabs(step - 1.0) < kEpsilon) break;
  }
  return fraction;
}

}  // namespace

double mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a) {
    for (double y : b) u += x > y ? 1.0 : (x == y ? 0.5 : 0.0);
  }
  return u;
}

double mann_whitney_two_sided_p(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 1.0;
  const double n = static_cast<double>(a.size());
  const double m = static_cast<double>(b.size());
  const double u = mann_whitney_u(a, b);
  if (a.size() + b.size() <= kExactMannWhitneyAtMost && !has_ties(a, b)) {
    const std::vector<double> counts = u_counts(a.size(), b.size());
    const double all = std::accumulate(counts.begin(), counts.end(), 0.0);
    const auto observed = static_cast<std::size_t>(u);  // whole without ties
    double at_most = 0;
    double at_least = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      if (k <= observed) at_most += counts[k];
      if (k >= observed) at_least += counts[k];
    }
    return std::min(1.0, 2.0 * std::min(at_most, at_least) / all);
  }
  // Ranks' variance, less what the ties take: sum over tie groups of t^3 - t.
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  double tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double total = n + m;
  const double variance = n * m / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
  if (variance <= 0) return 1.0;  // every value equal: nothing tells the sides apart
  const double z = std::max(0.0, std::fabs(u - n * m / 2.0) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

bool welch_testable(const SampleMoments& a, const SampleMoments& b) {
  if (a.count < 2 || b.count < 2) return false;
  return a.stddev * a.stddev / a.count + b.stddev * b.stddev / b.count > 0;
}

double welch_two_sided_p(const SampleMoments& a, const SampleMoments& b) {
  if (!welch_testable(a, b)) return 1.0;
  const double va = a.stddev * a.stddev / a.count;
  const double vb = b.stddev * b.stddev / b.count;
  const double t = (b.mean - a.mean) / std::sqrt(va + vb);
  const double df = (va + vb) * (va + vb) / (va * va / (a.count - 1) + vb * vb / (b.count - 1));
  return student_t_two_sided_p(t, df);
}

double student_t_two_sided_p(double t, double degrees_of_freedom) {
  if (!std::isfinite(t)) return 0.0;
  // P(|T| >= |t|) = I_{v / (v + t^2)}(v / 2, 1 / 2).
  const double x = degrees_of_freedom / (degrees_of_freedom + t * t);
  return std::clamp(regularized_incomplete_beta(degrees_of_freedom / 2.0, 0.5, x), 0.0, 1.0);
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0.0;
  if (x >= 1) return 1.0;
  // x^a (1 - x)^b / B(a, b), in logarithms to keep large a and b finite.
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  // The fraction converges on one side of the mean; the symmetry I_x(a, b) = 1 - I_{1-x}(b, a)
  // covers the other.
  if (x < (a + 1.0) / (a + b + 2.0)) return front * incomplete_beta_fraction(a, b, x) / a;
  return 1.0 - front * incomplete_beta_fraction(b, a, 1.0 - x) / b;
}

}  // namespace nsel::analyze
