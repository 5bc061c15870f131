// Exact per-group duration statistics (the columns of `nsys stats` summaries) in memory that does
// not grow with the number of events: values go to an unlinked temporary file once a small
// buffer is full, and medians are found by narrowing histogram passes over that file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "analyze/spilled_records.hpp"
#include "nsel/analyze/summary.hpp"

namespace nsel::analyze {

// 128-bit integers (a GCC/Clang extension) hold sums of squared nanoseconds exactly.
__extension__ typedef unsigned __int128 Unsigned128;
__extension__ typedef __int128 Signed128;

// a + b, for sums of nanoseconds. Throws nsel::Error when the sum passes what a long long holds
// (292 years: only a hostile export gets there) rather than wrapping to a wrong number.
long long add_ns(long long a, long long b);

// A row's "Time (%)" as nsys's summaries give it: its total's share of the grand total, rounded
// to 0.1 as SQLite rounds (0 when the grand total is 0).
double time_percent(long long total, long long grand_total);

class GroupedDurations {
 public:
  GroupedDurations();

  // `key` is any dense small number; keys are mapped to groups in finish(). Throws as add_ns
  // when the total passes 2^63 ns.
  void add(std::uint32_t key, std::int64_t duration);

  // Statistics per group; group_of_key[key] names the group of each key seen.
  std::vector<DurationStats> finish(const std::vector<std::uint32_t>& group_of_key,
                                    std::size_t group_count);

  // The same over several collections (one per thread that read part of a table), each with
  // its own keys.
  struct Part {
    GroupedDurations* durations;
    const std::vector<std::uint32_t>* group_of_key;
  };
  static std::vector<DurationStats> finish(const std::vector<Part>& parts, std::size_t group_count);

 private:
  struct Record {
    std::int64_t value;
    std::uint32_t key;
  };
  struct Accumulator {
    long long count = 0;
    long long total = 0;
    long long min = 0;
    long long max = 0;
    // The exact sum of squares: no rounding on the way, and merging is adding.
    Unsigned128 squares = 0;
  };
  // finish()'s steps: the keys' accumulators summed per group, and a group's statistics but
  // the median (which takes passes over the records).
  static std::vector<Accumulator> merged_by_group(const std::vector<Part>& parts,
                                                  std::size_t group_count);
  static DurationStats stats_but_median(const Accumulator& a);
  std::vector<Accumulator> by_key_;
  SpilledRecords<Record> records_;
};

}  // namespace nsel::analyze
