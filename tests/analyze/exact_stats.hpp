// The exact statistics of a list of durations, the slow way (sort and sum), to check nsel's
// streamed and pooled ones against: the median of an even count is the mean of the middle two.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "nsel/analyze/summary.hpp"

namespace nsel::test {

template <typename Integer>
DurationStats exact_stats(std::vector<Integer> v) {
  DurationStats s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.count = static_cast<long long>(n);
  for (auto x : v) s.total += x;
  s.min = v.front();
  s.max = v.back();
  s.mean = static_cast<double>(s.total) / static_cast<double>(s.count);
  s.median = (static_cast<double>(v[(n - 1) / 2]) + static_cast<double>(v[n / 2])) / 2.0;
  double squares = 0;
  for (auto x : v) squares += (static_cast<double>(x) - s.mean) * (static_cast<double>(x) - s.mean);
  s.stddev = n > 1 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0.0;
  return s;
}

}  // namespace nsel::test
