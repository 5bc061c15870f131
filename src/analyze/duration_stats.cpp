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

  // This pass keeps the values in range when they are few, else counts them in buckets.
  void begin_pass() {
    collect = in_range <= kCollectAtMost;
    if (collect) {
      kept.clear();
      kept.reserve(static_cast<std::size_t>(in_range));
    } else if (logarithmic) {
      histogram.assign(static_cast<std::size_t>(kLogBuckets), 0);
    } else {
      // The span fits in 64 bits: durations are differences of non-negative timestamps.
      const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
      width = static_cast<std::int64_t>((span + kBuckets - 1) / kBuckets);
      histogram.assign(static_cast<std::size_t>(kBuckets), 0);
    }
  }

  void count(std::int64_t v) {
    if (v < lo || v > hi) return;
    const auto offset = static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(lo);
    if (collect) {
      kept.push_back(v);
    } else if (logarithmic) {
      ++histogram[log_bucket(offset)];
    } else {
      ++histogram[static_cast<std::size_t>(offset / static_cast<std::uint64_t>(width))];
    }
  }

  void end_pass() {
    if (collect) {
      select_kept();
    } else {
      narrow_to_bucket();
    }
  }

  void select_kept() {
    auto nth = kept.begin() + rank;
    std::nth_element(kept.begin(), nth, kept.end());
    value = *nth;
    resolved = true;
    std::vector<std::int64_t>().swap(kept);
  }

  // [lo, hi] becomes the bucket that holds the rank, and the rank one within it.
  void narrow_to_bucket() {
    long long below = 0;
    std::size_t bucket = 0;
    while (below + histogram[bucket] <= rank) below += histogram[bucket++];
    rank -= below;
    in_range = histogram[bucket];
    std::uint64_t first = static_cast<std::uint64_t>(bucket) * static_cast<std::uint64_t>(width);
    std::uint64_t bucket_width = static_cast<std::uint64_t>(width);
    if (logarithmic) std::tie(first, bucket_width) = log_bucket_span(bucket);
    logarithmic = false;
    lo = static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + first);
    hi = std::min(hi, static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + bucket_width - 1));
    resolved = lo == hi;
    value = lo;
    std::vector<std::uint32_t>().swap(histogram);
  }
};

// The median of every group: two order statistics per group, ranks (n-1)/2 and n/2 (equal for
// an odd count), found by passes over the records. Each pass narrows every target it takes by
// kBuckets, or keeps its few candidates outright, within kPassBudgetBytes.
class MedianSearch {
 public:
  // `groups`: each group's count, min and max.
  explicit MedianSearch(const std::vector<DurationStats>& groups)
      : targets_of_group_(groups.size()) {
    for (std::uint32_t g = 0; g < groups.size(); ++g) {
      const DurationStats& a = groups[g];
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
        targets_of_group_[g].push_back(targets_.size());
        targets_.push_back(std::move(t));
      }
    }
    in_pass_.assign(targets_.size(), 0);
  }

  // Takes the unresolved targets whose work fits the budget (at least one); false when every
  // target is resolved.
  bool begin_pass() {
    active_.clear();
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < targets_.size(); ++i) {
      Target& t = targets_[i];
      in_pass_[i] = 0;
      if (t.resolved) continue;
      if (!active_.empty() && bytes + t.pass_bytes() > kPassBudgetBytes) continue;
      bytes += t.pass_bytes();
      t.begin_pass();
      in_pass_[i] = 1;
      active_.push_back(i);
    }
    return !active_.empty();
  }

  // One record of this pass.
  void count(std::uint32_t group, std::int64_t value) {
    for (std::size_t i : targets_of_group_[group]) {
      if (in_pass_[i]) targets_[i].count(value);
    }
  }

  void end_pass() {
    for (std::size_t i : active_) targets_[i].end_pass();
  }

  // Once every pass is done; only for a group with values.
  double median(std::uint32_t group) const {
    const auto& mine = targets_of_group_[group];
    return (static_cast<double>(targets_[mine[0]].value) +
            static_cast<double>(targets_[mine[1]].value)) /
           2.0;
  }

 private:
  std::vector<Target> targets_;
  std::vector<std::vector<std::size_t>> targets_of_group_;
  std::vector<std::size_t> active_;
  std::vector<char> in_pass_;
};

}  // namespace

double time_percent(long long total, long long grand_total) {
  if (grand_total == 0) return 0;
  return round_like_sqlite(static_cast<double>(total) * 100.0 / static_cast<double>(grand_total),
                           1);
}

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

std::vector<GroupedDurations::Accumulator> GroupedDurations::merged_by_group(
    const std::vector<Part>& parts, std::size_t group_count) {
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
  return groups;
}

DurationStats GroupedDurations::stats_but_median(const Accumulator& a) {
  DurationStats s;
  s.count = a.count;
  if (a.count == 0) return s;
  s.total = a.total;
  s.min = a.min;
  s.max = a.max;
  // SQLite's avg(): the sum as a double over the count.
  s.mean = static_cast<double>(a.total) / static_cast<double>(a.count);
  // Sample variance (n * sum x^2 - (sum x)^2) / (n (n - 1)), the numerator exact in 128 bits.
  if (a.count > 1) {
    using Wide = Signed128;
    const Wide n = a.count;
    const Wide numerator = n * static_cast<Wide>(a.squares) - static_cast<Wide>(a.total) * a.total;
    s.stddev =
        std::sqrt(static_cast<long double>(numerator) /
                  (static_cast<long double>(a.count) * static_cast<long double>(a.count - 1)));
  }
  return s;
}

std::vector<DurationStats> GroupedDurations::finish(const std::vector<Part>& parts,
                                                    std::size_t group_count) {
  const std::vector<Accumulator> groups = merged_by_group(parts, group_count);
  std::vector<DurationStats> out(group_count);
  for (std::size_t g = 0; g < group_count; ++g) out[g] = stats_but_median(groups[g]);

  MedianSearch medians(out);
  while (medians.begin_pass()) {
    for (const Part& part : parts) {
      part.durations->records_.for_each(
          [&](const Record& r) { medians.count((*part.group_of_key)[r.key], r.value); });
    }
    medians.end_pass();
  }
  for (std::uint32_t g = 0; g < group_count; ++g) {
    if (out[g].count != 0) out[g].median = medians.median(g);
  }
  return out;
}

}  // namespace nsel::analyze
