// The one rule that groups range names carrying a step's number (nsel/analyze/range_names.hpp).
#include <gtest/gtest.h>

#include <cmath>

#include "nsel/analyze/range_names.hpp"

namespace {

nsel::SummaryRow row(const std::string& name, std::vector<long long> durations) {
  nsel::SummaryRow r;
  r.name = name;
  r.stats.count = static_cast<long long>(durations.size());
  double sum = 0;
  r.stats.min = durations.front();
  r.stats.max = durations.front();
  for (long long d : durations) {
    r.stats.total += d;
    sum += static_cast<double>(d);
    r.stats.min = std::min(r.stats.min, d);
    r.stats.max = std::max(r.stats.max, d);
  }
  r.stats.mean = sum / static_cast<double>(durations.size());
  double squares = 0;
  for (long long d : durations) squares += std::pow(static_cast<double>(d) - r.stats.mean, 2);
  r.stats.stddev =
      durations.size() > 1 ? std::sqrt(squares / static_cast<double>(durations.size() - 1)) : 0;
  r.stats.median = r.stats.mean;  // not used by the pooled rows
  return r;
}

std::vector<nsel::StepSummary> steps(std::initializer_list<long long> numbers) {
  std::vector<nsel::StepSummary> out;
  for (long long n : numbers) {
    nsel::StepSummary s;
    s.step = n;
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST(RangeNames, TheStepsNumberStandingAloneIsItsPlace) {
  EXPECT_EQ(nsel::name_with_step_place("step 5", 5), "step {n}");
  EXPECT_EQ(nsel::name_with_step_place("data copy in 5", 5), "data copy in {n}");
  EXPECT_EQ(nsel::name_with_step_place("layer 150", 15), "layer 150");  // inside a longer number
  EXPECT_EQ(nsel::name_with_step_place("5 of 5", 5), "5 of {n}");       // the last place
  EXPECT_EQ(nsel::name_with_step_place("forward", 5), "forward");
}

TEST(RangeNames, AGroupNeedsRangesOfTwoSteps) {
  nsel::StepNameGroups groups;
  groups.add("copy 2", 2);
  groups.add("copy 3", 3);
  groups.add("layer 12", 12);  // only step 12's: every step may have a "layer 12"
  EXPECT_EQ(groups.shown_name("copy 2", 2), "copy {n}");
  EXPECT_EQ(groups.shown_name("copy 3", std::vector<long long>{2, 3}), "copy {n}");
  EXPECT_EQ(groups.shown_name("layer 12", 12), "layer 12");
}

TEST(RangeNames, TableRowsOfTheStepsAreOneRowWithPooledStatistics) {
  const std::vector<nsel::SummaryRow> rows = {row("step 2", {300}), row("backward", {100, 140}),
                                              row("step 3", {500}), row("step 30", {7})};
  const auto grouped = nsel::group_rows_by_step(rows, steps({2, 3}));
  ASSERT_EQ(grouped.size(), 3u);
  EXPECT_EQ(grouped[0].row.name, "step {n}");
  EXPECT_EQ(grouped[0].names, 2u);
  EXPECT_FALSE(grouped[0].has_median);
  EXPECT_EQ(grouped[0].row.stats.count, 2);
  EXPECT_EQ(grouped[0].row.stats.total, 800);
  EXPECT_EQ(grouped[0].row.stats.min, 300);
  EXPECT_EQ(grouped[0].row.stats.max, 500);
  EXPECT_DOUBLE_EQ(grouped[0].row.stats.mean, 400);
  EXPECT_NEAR(grouped[0].row.stats.stddev, std::sqrt(20000.0), 1e-9);  // of {300, 500}
  EXPECT_EQ(grouped[1].row.name, "backward");
  EXPECT_TRUE(grouped[1].has_median);
  EXPECT_EQ(grouped[2].row.name, "step 30");  // step 30 is not one of the process's steps
}

TEST(RangeNames, PooledStatisticsEqualThoseOfAllTheValues) {
  const nsel::DurationStats pooled =
      nsel::pool_stats({row("a", {1, 2, 9}).stats, row("b", {4, 4}).stats});
  const nsel::DurationStats all = row("all", {1, 2, 9, 4, 4}).stats;
  EXPECT_EQ(pooled.count, all.count);
  EXPECT_EQ(pooled.total, all.total);
  EXPECT_DOUBLE_EQ(pooled.mean, all.mean);
  EXPECT_NEAR(pooled.stddev, all.stddev, 1e-12);
  EXPECT_TRUE(std::isnan(pooled.median));
}
