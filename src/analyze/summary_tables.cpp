#include "analyze/summary_tables.hpp"

#include <algorithm>
#include <cmath>

namespace nsel {

double round_like_sqlite(double value, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

namespace analyze {

std::vector<SummaryRow> summary_rows(
    const std::vector<std::pair<GroupedDurations*, const std::vector<std::string>*>>& parts,
    std::size_t keep) {
  Interner<std::string> names;
  std::vector<std::string> group_names;
  std::vector<std::vector<std::uint32_t>> group_of_key(parts.size());
  std::vector<GroupedDurations::Part> finish_parts;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    for (const std::string& name : *parts[p].second) {
      const auto [group, inserted] = names.add(name);
      if (inserted) group_names.push_back(name);
      group_of_key[p].push_back(group);
    }
    finish_parts.push_back({parts[p].first, &group_of_key[p]});
  }
  const std::vector<DurationStats> stats =
      GroupedDurations::finish(finish_parts, group_names.size());
  std::vector<SummaryRow> rows;
  long long grand_total = 0;
  for (std::size_t g = 0; g < stats.size(); ++g) {
    if (stats[g].count == 0) continue;
    rows.push_back({group_names[g], 0, stats[g]});
    grand_total = add_ns(grand_total, stats[g].total);
  }
  for (SummaryRow& row : rows) {
    row.time_percent = time_percent(row.stats.total, grand_total);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const SummaryRow& a, const SummaryRow& b) {
    return a.stats.total != b.stats.total ? a.stats.total > b.stats.total : a.name < b.name;
  });
  if (rows.size() > keep) rows.resize(keep);
  return rows;
}

}  // namespace analyze
}  // namespace nsel
