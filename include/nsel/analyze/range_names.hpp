// The one rule that groups range names carrying a step's number, for every table, legend and
// per-step share: "data copy in 5" in step 5 and "data copy in 6" in step 6 are one range,
// "data copy in {n}"; "step 2" ... "step 9" are one, "step {n}". A name is grouped only when
// ranges of at least two steps fall under its group ("layer 12" in step 12 alone stays itself:
// every step may have a "layer 12"). JSON and CSV keep the raw rows.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nsel/analyze/summary.hpp"

namespace nsel {

// `name` with `step`'s number, where it stands alone (not inside a longer number), put as
// "{n}": the last such place, as step numbers end names. `name` itself when it has none.
std::string name_with_step_place(const std::string& name, long long step);

class StepNameGroups {
 public:
  // A range of `name` seen in step `step`.
  void add(const std::string& name, long long step);
  // The name to show: its group's when the group holds ranges of two steps or more.
  std::string shown_name(const std::string& name, long long step) const;
  // As shown_name, for a name whose step is not known (a table over the whole capture): the
  // group of the first of `steps` that puts its number in place.
  std::string shown_name(const std::string& name, const std::vector<long long>& steps) const;

 private:
  std::map<std::string, std::set<long long>> steps_of_group_;
};

// Count, total, mean, min, max and the pooled sample standard deviation of parts (their median
// cannot be rebuilt from them: nan).
DurationStats pool_stats(const std::vector<DurationStats>& parts);

struct GroupedRow {
  SummaryRow row;          // a group's row: the parts pooled, its time share their sum
  std::size_t names = 1;   // raw names it stands for
  bool has_median = true;  // false for a group of two names or more
};

// The rows of one process's table with the names that carry its steps' numbers grouped, by total
// time, largest first.
std::vector<GroupedRow> group_rows_by_step(const std::vector<SummaryRow>& rows,
                                           const std::vector<StepSummary>& steps);

}  // namespace nsel
