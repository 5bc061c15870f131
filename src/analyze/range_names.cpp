#include "nsel/analyze/range_names.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nsel {

std::string name_with_step_place(const std::string& name, long long step) {
  const std::string number = std::to_string(step);
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (std::size_t at = name.rfind(number); at != std::string::npos;
       at = at == 0 ? std::string::npos : name.rfind(number, at - 1)) {
    const std::size_t after = at + number.size();
    if ((at > 0 && digit(name[at - 1])) || (after < name.size() && digit(name[after]))) continue;
    return name.substr(0, at) + "{n}" + name.substr(after);
  }
  return name;
}

void StepNameGroups::add(const std::string& name, long long step) {
  const std::string group = name_with_step_place(name, step);
  if (group != name) steps_of_group_[group].insert(step);
}

std::string StepNameGroups::shown_name(const std::string& name, long long step) const {
  const std::string group = name_with_step_place(name, step);
  const auto it = steps_of_group_.find(group);
  return it != steps_of_group_.end() && it->second.size() >= 2 ? group : name;
}

std::string StepNameGroups::shown_name(const std::string& name,
                                       const std::vector<long long>& steps) const {
  for (long long step : steps) {
    const std::string shown = shown_name(name, step);
    if (shown != name) return shown;
  }
  return name;
}

DurationStats pool_stats(const std::vector<DurationStats>& parts) {
  DurationStats out;
  out.median = std::numeric_limits<double>::quiet_NaN();
  bool first = true;
  for (const DurationStats& part : parts) {
    if (part.count == 0) continue;
    out.count += part.count;
    out.total += part.total;
    out.min = first ? part.min : std::min(out.min, part.min);
    out.max = first ? part.max : std::max(out.max, part.max);
    first = false;
  }
  if (out.count == 0) return out;
  const auto n = static_cast<double>(out.count);
  out.mean = static_cast<double>(out.total) / n;
  if (out.count > 1) {
    // Each part's squares about its own mean, (k - 1) s^2, plus k (its mean - the pooled mean)^2:
    // no large sums of squares that cancel.
    double squares = 0;
    for (const DurationStats& part : parts) {
      if (part.count == 0) continue;
      const auto k = static_cast<double>(part.count);
      const double offset = part.mean - out.mean;
      squares += (k - 1.0) * part.stddev * part.stddev + k * offset * offset;
    }
    out.stddev = std::sqrt(squares / (n - 1.0));
  }
  return out;
}

std::vector<GroupedRow> group_rows_by_step(const std::vector<SummaryRow>& rows,
                                           const std::vector<StepSummary>& steps) {
  std::vector<long long> numbers;
  for (const StepSummary& s : steps) numbers.push_back(s.step);
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  StepNameGroups groups;
  for (const SummaryRow& row : rows) {
    for (long long step : numbers) groups.add(row.name, step);
  }
  std::vector<GroupedRow> out;
  std::map<std::string, std::size_t> index;
  std::map<std::string, std::vector<DurationStats>> parts;
  for (const SummaryRow& row : rows) {
    const std::string shown = groups.shown_name(row.name, numbers);
    const auto [it, added] = index.emplace(shown, out.size());
    if (added) {
      GroupedRow grouped;
      grouped.row = row;
      grouped.row.name = shown;
      grouped.names = 0;
      grouped.row.time_percent = 0;
      out.push_back(grouped);
    }
    GroupedRow& grouped = out[it->second];
    ++grouped.names;
    grouped.row.time_percent += row.time_percent;
    parts[shown].push_back(row.stats);
  }
  for (GroupedRow& grouped : out) {
    if (grouped.names < 2) continue;
    grouped.row.stats = pool_stats(parts[grouped.row.name]);
    grouped.has_median = false;
    grouped.row.time_percent = round_like_sqlite(grouped.row.time_percent, 1);
  }
  std::stable_sort(out.begin(), out.end(), [](const GroupedRow& a, const GroupedRow& b) {
    return a.row.stats.total > b.row.stats.total;
  });
  return out;
}

}  // namespace nsel
