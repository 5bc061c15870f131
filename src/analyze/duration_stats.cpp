#include "analyze/duration_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "nsel/core/error.hpp"

namespace nsel::analyze {
namespace {

constexpr std::size_t kBufferRecords = 1 << 16;  // 1 MiB in memory, the rest on disk
constexpr std::int64_t kBuckets = 4096;          // histogram width of a linear pass
constexpr int kMantissaBits = 8;
constexpr std::int64_t kMantissa = 1 << kMantissaBits;
constexpr std::int64_t kLogBuckets = kMantissa * (64 - kMantissaBits + 1);

// Log-linear buckets over an offset d >= 0: exact below 256, then 256 buckets per power of
// two. Durations cluster near their minimum, so the first pass usually pins the median to a
// bucket of width 1 (or a narrow one) at once.
std::size_t log_bucket(std::uint64_t d) {
  if (d < static_cast<std::uint64_t>(kMantissa)) return static_cast<std::size_t>(d);
  const int exponent = 63 - __builtin_clzll(d);
  const int shift = exponent - kMantissaBits;
  return static_cast<std::size_t>(kMantissa + shift * kMantissa +
                                  static_cast<std::int64_t>((d >> shift) & (kMantissa - 1)));
}
// The first offset of a bucket and its width.
std::pair<std::uint64_t, std::uint64_t> log_bucket_span(std::size_t bucket) {
  const auto b = static_cast<std::uint64_t>(bucket);
  if (b < static_cast<std::uint64_t>(kMantissa)) return {b, 1};
  const std::uint64_t shift = (b - kMantissa) / kMantissa;
  const std::uint64_t mantissa = (b - kMantissa) % kMantissa;
  return {(static_cast<std::uint64_t>(kMantissa) + mantissa) << shift, std::uint64_t{1} << shift};
}
constexpr long long kCollectAtMost = 1 << 15;  // few enough to keep and select directly
constexpr std::size_t kPassBudgetBytes = 32u << 20;

// One order statistic still to find: the value of rank `rank` among the group's values that
// lie in [lo, hi]; `in_range` of them do.
struct Target {
  std::uint32_t group = 0;
  long long rank = 0;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  long long in_range = 0;
  bool resolved = false;
  std::int64_t value = 0;
  // Work of the current pass.
  bool collect = false;
  bool logarithmic = true;  // the first pass; later ones are linear
  std::int64_t width = 1;
  std::vector<std::uint32_t> histogram;
  std::vector<std::int64_t> kept;

  std::size_t pass_bytes() const {
    if (in_range <= kCollectAtMost) return static_cast<std::size_t>(in_range) * 8;
    return static_cast<std::size_t>(logarithmic ? kLogBuckets : kBuckets) * 4;
  }
};

}  // namespace

long long add_ns(long long a, long long b) {
  long long sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw Error("not a readable Nsight Systems export: durations add up past 2^63 ns", 1);
  }
  return sum;
}

GroupedDurations::GroupedDurations() : records_(kBufferRecords) {}

void GroupedDurations::add(std::uint32_t key, std::int64_t duration) {
  if (key >= by_key_.size()) by_key_.resize(key + 1);
  Accumulator& a = by_key_[key];
  if (a.count == 0) {
    a.min = a.max = duration;
  } else {
    a.min = std::min<long long>(a.min, duration);
    a.max = std::max<long long>(a.max, duration);
  }
  a.total = add_ns(a.total, duration);
  ++a.count;
  const auto magnitude = static_cast<std::uint64_t>(duration < 0 ? -duration : duration);
  a.squares += static_cast<Unsigned128>(magnitude) * magnitude;
  records_.push_back({duration, key});
}

std::vector<DurationStats> GroupedDurations::finish(const std::vector<std::uint32_t>& group_of_key,
                                                    std::size_t group_count) {
  return finish({{this, &group_of_key}}, group_count);
}

std::vector<DurationStats> GroupedDurations::finish(const std::vector<Part>& parts,
                                                    std::size_t group_count) {
  std::vector<Accumulator> groups(group_count);
  for (const Part& part : parts) {
    for (std::size_t key = 0; key < part.durations->by_key_.size(); ++key) {
      const Accumulator& b = part.durations->by_key_[key];
      if (b.count == 0) continue;
      Accumulator& a = groups.at(part.group_of_key->at(key));
      if (a.count == 0) {
        a = b;
        continue;
      }
      a.squares += b.squares;
      a.count += b.count;
      a.total = add_ns(a.total, b.total);
      a.min = std::min(a.min, b.min);
      a.max = std::max(a.max, b.max);
    }
  }

  // Two order statistics per group: ranks (n-1)/2 and n/2, equal for an odd count.
  std::vector<Target> targets;
  std::vector<std::vector<std::size_t>> targets_of_group(group_count);
  for (std::uint32_t g = 0; g < group_count; ++g) {
    const Accumulator& a = groups[g];
    if (a.count == 0) continue;
    for (long long rank : {(a.count - 1) / 2, a.count / 2}) {
      Target t;
      t.group = g;
      t.rank = rank;
      t.lo = a.min;
      t.hi = a.max;
      t.in_range = a.count;
      t.resolved = a.min == a.max;
      t.value = a.min;
      targets_of_group[g].push_back(targets.size());
      targets.push_back(std::move(t));
    }
  }

  // Each pass narrows every target it takes by kBuckets, or keeps its few candidates outright.
  std::vector<std::size_t> active;
  std::vector<char> in_pass(targets.size(), 0);
  for (;;) {
    active.clear();
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      Target& t = targets[i];
      in_pass[i] = 0;
      if (t.resolved) continue;
      if (!active.empty() && bytes + t.pass_bytes() > kPassBudgetBytes) continue;
      bytes += t.pass_bytes();
      t.collect = t.in_range <= kCollectAtMost;
      if (t.collect) {
        t.kept.clear();
        t.kept.reserve(static_cast<std::size_t>(t.in_range));
      } else if (t.logarithmic) {
        t.histogram.assign(static_cast<std::size_t>(kLogBuckets), 0);
      } else {
        // The span fits in 64 bits: durations are differences of non-negative timestamps.
        const auto span = static_cast<std::uint64_t>(t.hi) - static_cast<std::uint64_t>(t.lo) + 1;
        t.width = static_cast<std::int64_t>((span + kBuckets - 1) / kBuckets);
        t.histogram.assign(static_cast<std::size_t>(kBuckets), 0);
      }
      in_pass[i] = 1;
      active.push_back(i);
    }
    if (active.empty()) break;
    for (const Part& part : parts) {
      part.durations->records_.for_each([&](const Record& r) {
        for (std::size_t i : targets_of_group[(*part.group_of_key)[r.key]]) {
          if (!in_pass[i]) continue;
          Target& t = targets[i];
          if (r.value < t.lo || r.value > t.hi) continue;
          const auto offset =
              static_cast<std::uint64_t>(r.value) - static_cast<std::uint64_t>(t.lo);
          if (t.collect) {
            t.kept.push_back(r.value);
          } else if (t.logarithmic) {
            ++t.histogram[log_bucket(offset)];
          } else {
            ++t.histogram[static_cast<std::size_t>(offset / static_cast<std::uint64_t>(t.width))];
          }
        }
      });
    }
    for (std::size_t i : active) {
      Target& t = targets[i];
      if (t.collect) {
        auto nth = t.kept.begin() + t.rank;
        std::nth_element(t.kept.begin(), nth, t.kept.end());
        t.value = *nth;
        t.resolved = true;
        std::vector<std::int64_t>().swap(t.kept);
        continue;
      }
      long long below = 0;
      std::size_t bucket = 0;
      while (below + t.histogram[bucket] <= t.rank) below += t.histogram[bucket++];
      t.rank -= below;
      t.in_range = t.histogram[bucket];
      std::uint64_t first =
          static_cast<std::uint64_t>(bucket) * static_cast<std::uint64_t>(t.width);
      std::uint64_t width = static_cast<std::uint64_t>(t.width);
      if (t.logarithmic) std::tie(first, width) = log_bucket_span(bucket);
      t.logarithmic = false;
      t.lo = static_cast<std::int64_t>(static_cast<std::uint64_t>(t.lo) + first);
      t.hi =
          std::min(t.hi, static_cast<std::int64_t>(static_cast<std::uint64_t>(t.lo) + width - 1));
      t.resolved = t.lo == t.hi;
      t.value = t.lo;
      std::vector<std::uint32_t>().swap(t.histogram);
    }
  }

  std::vector<DurationStats> out(group_count);
  for (std::uint32_t g = 0; g < group_count; ++g) {
    const Accumulator& a = groups[g];
    DurationStats& s = out[g];
    s.count = a.count;
    if (a.count == 0) continue;
    s.total = a.total;
    s.min = a.min;
    s.max = a.max;
    // SQLite's avg(): the sum as a double over the count.
    s.mean = static_cast<double>(a.total) / static_cast<double>(a.count);
    // Sample variance (n * sum x^2 - (sum x)^2) / (n (n - 1)), the numerator exact in 128 bits.
    if (a.count > 1) {
      using Wide = Signed128;
      const Wide n = a.count;
      const Wide numerator =
          n * static_cast<Wide>(a.squares) - static_cast<Wide>(a.total) * a.total;
      s.stddev =
          std::sqrt(static_cast<long double>(numerator) /
                    (static_cast<long double>(a.count) * static_cast<long double>(a.count - 1)));
    }
    const auto& mine = targets_of_group[g];
    s.median = (static_cast<double>(targets[mine[0]].value) +
                static_cast<double>(targets[mine[1]].value)) /
               2.0;
  }
  return out;
}

}  // namespace nsel::analyze
