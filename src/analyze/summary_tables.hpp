// What every summary table needs: names from StringIds, dense numbers for names, and the table
// itself from grouped durations, sorted and with percentages as `nsys stats` prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyze/duration_stats.hpp"
#include "analyze/sqlite_db.hpp"
#include "nsel/analyze/summary.hpp"

namespace nsel::analyze {

// Text of StringIds ids, looked up once each.
class Strings {
 public:
  explicit Strings(const Database& db) {
    if (db.has_table("StringIds"))
      lookup_.emplace(db.prepare("SELECT value FROM StringIds WHERE id=?"));
  }
  std::optional<std::string> get(long long id) {
    if (!lookup_) return std::nullopt;
    lookup_->reset();
    lookup_->bind(1, id);
    std::optional<std::string> value;
    if (lookup_->step()) value = valid_utf8(lookup_->text(0));
    // Left active, the statement would keep a later scan from registering its row function.
    lookup_->reset();
    return value;
  }

 private:
  std::optional<Statement> lookup_;
};

// Dense numbers for distinct values, in first-seen order.
template <typename Value, typename Hash = std::hash<Value>>
class Interner {
 public:
  std::pair<std::uint32_t, bool> add(const Value& v) {
    const auto [it, inserted] = index_.try_emplace(v, static_cast<std::uint32_t>(index_.size()));
    return {it->second, inserted};
  }
  std::size_t size() const { return index_.size(); }

 private:
  std::unordered_map<Value, std::uint32_t, Hash> index_;
};

// Groups keys whose names are equal (as nsys groups by name) and builds the sorted table, of
// at most `keep` rows. `parts`: durations and the name of each of their keys.
std::vector<SummaryRow> summary_rows(
    const std::vector<std::pair<GroupedDurations*, const std::vector<std::string>*>>& parts,
    std::size_t keep);

}  // namespace nsel::analyze
