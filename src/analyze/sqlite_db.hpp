// A read-only SQLite export behind a small interface: tables and columns are looked up by name,
// so exports from newer Nsight Systems versions work and a missing table simply means no data.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/values.hpp"

namespace nsel::analyze {

// Exports are input files and hostile as any: every value is checked before it is used.
// Times beyond 2^61 ns (73 years) are no capture's; within it, any difference of two times and
// any sum of two differences fits a long long.
inline constexpr long long kLatestTime = 1LL << 61;
// Longer names (kernels, ranges) than this are no program's: a report with one fails.
inline constexpr std::size_t kLongestText = 1u << 20;

// Names from an export pass through valid_utf8 (nsel/core/values.hpp): JSON holds only UTF-8
// and would refuse the whole report.

// "'abc'", "NULL", "1.5", "a blob of 3 bytes": a value as an error quotes it.
std::string describe_value(sqlite3_value* value);

// Throws nsel::Error (exit code 1), one line naming `file`, `table`.`column`, the value and what
// belongs there.
[[noreturn]] void bad_export_value(const std::filesystem::path& file, std::string_view table,
                                   std::string_view column, const std::string& value,
                                   std::string_view expected);

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::filesystem::path& file);
  bool step();  // true while there is a row
  void bind(int index, long long value);
  void reset();
  sqlite3_stmt* get() const { return statement_.get(); }
  const std::filesystem::path& file() const { return file_; }

  bool is_null(int column) const { return sqlite3_column_type(get(), column) == SQLITE_NULL; }
  // The whole number in `column`; throws nsel::Error naming the file, table, column and value
  // when it holds anything else (text, a real, a blob, NULL).
  long long integer(int column) const {
    if (sqlite3_column_type(get(), column) != SQLITE_INTEGER) [[unlikely]] {
      bad_column(column, "a whole number");
    }
    return sqlite3_column_int64(get(), column);
  }
  // A time in ns (integer() within kLatestTime).
  long long time(int column) const;
  // At most kLongestText bytes, else throws as integer().
  std::string text(int column) const;

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  [[noreturn]] void bad_column(int column, std::string_view expected) const;
  std::unique_ptr<sqlite3_stmt, Finalizer> statement_;
  std::filesystem::path file_;
};

// Where a scan's values come from, for errors that name them.
struct ScanSource {
  const std::filesystem::path* file;
  std::string_view table;
  const std::vector<std::string>* expressions;
};

// The values of one row handed to a scan callback. The readers check the type (and range) of
// each value: a wrong one throws nsel::Error naming the file, table, column and value.
class RowValues {
 public:
  RowValues(sqlite3_value** values, const ScanSource& source) : values_(values), source_(source) {}
  int type(int i) const { return sqlite3_value_type(values_[i]); }
  bool is_null(int i) const { return type(i) == SQLITE_NULL; }
  long long integer(int i) const {
    if (type(i) != SQLITE_INTEGER) [[unlikely]]
      bad(i, "a whole number");
    return sqlite3_value_int64(values_[i]);
  }
  // integer(), or `fallback` for NULL (a missing column reads as NULL).
  long long integer_or(int i, long long fallback) const {
    return is_null(i) ? fallback : integer(i);
  }
  // A time in ns: integer() within kLatestTime.
  long long time(int i) const {
    const long long t = integer(i);
    if (t < -kLatestTime || t > kLatestTime) [[unlikely]]
      bad(i, "a time in ns within 2^61");
    return t;
  }
  // The end time in column `i` of something begun at `start`: time(), not before `start`.
  long long end_time(int i, long long start) const {
    const long long t = time(i);
    if (t < start) [[unlikely]]
      bad(i, "an end not before its start " + std::to_string(start));
    return t;
  }
  // At most kLongestText bytes, else throws.
  std::string_view text(int i) const {
    const auto* raw = reinterpret_cast<const char*>(sqlite3_value_text(values_[i]));
    if (raw == nullptr) return std::string_view();
    const auto bytes = static_cast<std::size_t>(sqlite3_value_bytes(values_[i]));
    if (bytes > kLongestText) [[unlikely]]
      bad(i, "a text of at most 1 MiB");
    return std::string_view(raw, bytes);
  }
  [[noreturn]] void bad(int i, const std::string& expected) const;

 private:
  sqlite3_value** values_;
  ScanSource source_;
};

class Database {
 public:
  // Throws nsel::Error (exit code 1) when the file cannot be read as a SQLite database.
  explicit Database(const std::filesystem::path& file);
  bool has_table(const std::string& table) const;
  // Column names of `table` (empty when there is no such table).
  std::set<std::string> columns(const std::string& table) const;
  Statement prepare(const std::string& sql) const { return Statement(db_.get(), sql, file_); }
  // Calls `row` with `expressions` of every row of `table`, in `order_by` order when given
  // (else in storage order). Rows are handed over inside SQLite's own loop, which costs far
  // less per row than stepping a statement and reading its columns.
  void scan(const std::string& table, const std::vector<std::string>& expressions,
            const std::string& order_by, const std::function<void(const RowValues&)>& row) const;
  const std::filesystem::path& file() const { return file_; }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close(db); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
  std::filesystem::path file_;
};

}  // namespace nsel::analyze
