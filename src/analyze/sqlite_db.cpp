#include "analyze/sqlite_db.hpp"

#include "nsel/error.hpp"

namespace nsel::analyze {

Statement::Statement(sqlite3* db, const std::string& sql, const std::filesystem::path& file)
    : file_(file) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    throw Error(quote(file.string()) + ": not an nsys export (" + sqlite3_errmsg(db) + ")", 1);
  }
  statement_.reset(raw);
}

bool Statement::step() {
  const int rc = sqlite3_step(get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw Error(
      quote(file_.string()) + ": cannot read (" + sqlite3_errmsg(sqlite3_db_handle(get())) + ")",
      1);
}

void Statement::bind(int index, long long value) {
  sqlite3_bind_int64(get(), index, value);
}

void Statement::reset() {
  sqlite3_reset(get());
}

std::string Statement::text(int column) const {
  const auto* value = reinterpret_cast<const char*>(sqlite3_column_text(get(), column));
  return value == nullptr
             ? std::string()
             : std::string(value, static_cast<std::size_t>(sqlite3_column_bytes(get(), column)));
}

Database::Database(const std::filesystem::path& file) : file_(file) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  db_.reset(raw);
  if (rc != SQLITE_OK) {
    throw Error(quote(file.string()) + ": cannot open as SQLite: " + sqlite3_errstr(rc), 1);
  }
  // Opening is lazy; the first read tells whether this is a database at all.
  if (sqlite3_exec(raw, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    throw Error(quote(file.string()) + ": not a SQLite export (" + sqlite3_errmsg(raw) + ")", 1);
  }
}

bool Database::has_table(const std::string& table) const {
  Statement s = prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?");
  sqlite3_bind_text(s.get(), 1, table.c_str(), -1, SQLITE_TRANSIENT);
  return s.step();
}

std::set<std::string> Database::columns(const std::string& table) const {
  std::set<std::string> names;
  if (!has_table(table)) return names;
  // The name comes from our own code, never from input, and was just checked to exist.
  Statement s = prepare("SELECT name FROM pragma_table_info('" + table + "')");
  while (s.step()) names.insert(s.text(0));
  return names;
}

}  // namespace nsel::analyze
