// A read-only SQLite export behind a small interface: tables and columns are looked up by name,
// so exports from newer Nsight Systems versions work and a missing table simply means no data.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

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

class Database {
 public:
  // Throws nsel::Error (exit code 1) when the file cannot be read as a SQLite database.
  explicit Database(const std::filesystem::path& file);
  bool has_table(const std::string& table) const;
  // Column names of `table` (empty when there is no such table).
  std::set<std::string> columns(const std::string& table) const;
  Statement prepare(const std::string& sql) const { return Statement(db_.get(), sql, file_); }
  const std::filesystem::path& file() const { return file_; }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close(db); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
  std::filesystem::path file_;
};

}  // namespace nsel::analyze
