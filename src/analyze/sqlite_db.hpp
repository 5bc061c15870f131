// A read-only SQLite export behind a small interface: tables and columns are looked up by name,
// so exports from newer Nsight Systems versions work and a missing table simply means no data.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace nsel::analyze {

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::filesystem::path& file);
  bool step();  // true while there is a row
  void bind(int index, long long value);
  void reset();
  sqlite3_stmt* get() const { return statement_.get(); }

  bool is_null(int column) const { return sqlite3_column_type(get(), column) == SQLITE_NULL; }
  long long integer(int column) const { return sqlite3_column_int64(get(), column); }
  std::string text(int column) const;

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  std::unique_ptr<sqlite3_stmt, Finalizer> statement_;
  std::filesystem::path file_;
};

// The values of one row handed to a scan callback.
class RowValues {
 public:
  explicit RowValues(sqlite3_value** values) : values_(values) {}
  long long integer(int i) const { return sqlite3_value_int64(values_[i]); }
  int type(int i) const { return sqlite3_value_type(values_[i]); }
  std::string_view text(int i) const {
    const auto* raw = reinterpret_cast<const char*>(sqlite3_value_text(values_[i]));
    return raw == nullptr
               ? std::string_view()
               : std::string_view(raw, static_cast<std::size_t>(sqlite3_value_bytes(values_[i])));
  }

 private:
  sqlite3_value** values_;
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
