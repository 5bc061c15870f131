#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <memory>

#include "nsel/error.hpp"
#include "nsel/step_ranges.hpp"

namespace nsel {
namespace {

struct DatabaseCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StatementFinalizer {
  void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};

bool has_table(sqlite3* db, const char* table) {
  sqlite3_stmt* raw = nullptr;
  sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &raw,
                     nullptr);
  std::unique_ptr<sqlite3_stmt, StatementFinalizer> statement(raw);
  if (!statement) return false;
  sqlite3_bind_text(raw, 1, table, -1, SQLITE_STATIC);
  return sqlite3_step(raw) == SQLITE_ROW;
}

}  // namespace

std::vector<StepRange> read_step_ranges(const std::filesystem::path& sqlite_export) {
  sqlite3* raw_db = nullptr;
  const int open_rc =
      sqlite3_open_v2(sqlite_export.c_str(), &raw_db, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, DatabaseCloser> db(raw_db);
  if (open_rc != SQLITE_OK) {
    throw Error(
        quote(sqlite_export.string()) + ": cannot open as SQLite: " + sqlite3_errstr(open_rc), 1);
  }
  // Opening is lazy; the first read tells whether this is a database at all.
  if (sqlite3_exec(raw_db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    throw Error(
        quote(sqlite_export.string()) + ": not a SQLite export (" + sqlite3_errmsg(raw_db) + ")",
        1);
  }
  std::vector<StepRange> steps;
  if (!has_table(raw_db, "NVTX_EVENTS")) return steps;
  // Newer exports keep the text in StringIds (textId); older ones inline it (text).
  const bool has_strings = has_table(raw_db, "StringIds");
  const std::string query =
      has_strings ? "SELECT COALESCE(e.text, s.value), e.start, e.end FROM NVTX_EVENTS e "
                    "LEFT JOIN StringIds s ON e.textId = s.id "
                    "WHERE e.end IS NOT NULL AND COALESCE(e.text, s.value) LIKE 'step %'"
                  : "SELECT text, start, end FROM NVTX_EVENTS "
                    "WHERE end IS NOT NULL AND text LIKE 'step %'";
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(raw_db, query.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    throw Error(
        quote(sqlite_export.string()) + ": not an nsys export (" + sqlite3_errmsg(raw_db) + ")", 1);
  }
  std::unique_ptr<sqlite3_stmt, StatementFinalizer> statement(raw);
  while (sqlite3_step(raw) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
    if (text == nullptr) continue;
    const std::string_view name(text);
    const std::string_view number = name.substr(5);
    long long step = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), step);
    if (ec != std::errc() || end != number.data() + number.size()) continue;  // "step 2 fwd"
    steps.push_back({step, sqlite3_column_int64(raw, 1), sqlite3_column_int64(raw, 2)});
  }
  std::sort(steps.begin(), steps.end(),
            [](const StepRange& a, const StepRange& b) { return a.start_ns < b.start_ns; });
  return steps;
}

std::string describe_steps(const std::vector<StepRange>& steps) {
  if (steps.empty()) return "none";
  std::vector<long long> numbers;
  for (const StepRange& s : steps) numbers.push_back(s.step);
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  std::string out;
  // Runs of consecutive steps: "2-3", "5", "2-3,7".
  for (size_t i = 0; i < numbers.size();) {
    size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(numbers[i]);
    if (j > i) out += "-" + std::to_string(numbers[j]);
    i = j + 1;
  }
  out += " (" + std::to_string(numbers.size()) + (numbers.size() == 1 ? " step)" : " steps)");
  return out;
}

}  // namespace nsel
