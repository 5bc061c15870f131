#include "analyze/sqlite_db.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "nsel/core/error.hpp"

namespace nsel::analyze {

namespace {

// The table a statement reads: the first name after FROM in its SQL (our own queries).
std::string table_of_sql(std::string_view sql) {
  const std::size_t from = sql.find(" FROM ");
  if (from == std::string_view::npos) return "?";
  sql.remove_prefix(from + 6);
  const std::size_t end = sql.find_first_of(" ,;)");
  return std::string(sql.substr(0, end));
}

}  // namespace

std::string describe_value(sqlite3_value* value) {
  switch (sqlite3_value_type(value)) {
    case SQLITE_NULL:
      return "NULL";
    case SQLITE_INTEGER:
      return std::to_string(sqlite3_value_int64(value));
    case SQLITE_FLOAT: {
      char out[32];
      std::snprintf(out, sizeof out, "%.17g", sqlite3_value_double(value));
      return out;
    }
    case SQLITE_BLOB:
      return "a blob of " + std::to_string(sqlite3_value_bytes(value)) + " bytes";
    default: {
      const auto* raw = reinterpret_cast<const char*>(sqlite3_value_text(value));
      const auto bytes = static_cast<std::size_t>(sqlite3_value_bytes(value));
      // quote() keeps it one line, whatever the text holds.
      const std::string text =
          raw == nullptr ? std::string() : std::string(raw, std::min<std::size_t>(bytes, 40));
      return quote(text) + (bytes > 40 ? "... (" + std::to_string(bytes) + " bytes)" : "");
    }
  }
}

void bad_export_value(const std::filesystem::path& file, std::string_view table,
                      std::string_view column, const std::string& value,
                      std::string_view expected) {
  throw Error(
      quote(file.string()) + ": not a readable Nsight Systems export: " + std::string(table) + "." +
          std::string(column) + " holds " + value + " where " + std::string(expected) + " belongs",
      1);
}

void RowValues::bad(int i, const std::string& expected) const {
  std::string_view table = source_.table;
  table = table.substr(0, table.find(' '));
  bad_export_value(*source_.file, table, (*source_.expressions)[static_cast<std::size_t>(i)],
                   describe_value(values_[i]), expected);
}

void Statement::bad_column(int column, std::string_view expected) const {
  const char* name = sqlite3_column_name(get(), column);
  bad_export_value(file_, table_of_sql(sqlite3_sql(get())), name == nullptr ? "?" : name,
                   describe_value(sqlite3_column_value(get(), column)), expected);
}

long long Statement::time(int column) const {
  const long long t = integer(column);
  if (t < -kLatestTime || t > kLatestTime) bad_column(column, "a time in ns within 2^61");
  return t;
}

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
  if (value == nullptr) return std::string();
  const auto bytes = static_cast<std::size_t>(sqlite3_column_bytes(get(), column));
  if (bytes > kLongestText) bad_column(column, "a text of at most 1 MiB");
  return std::string(value, bytes);
}

// NOMUTEX: a connection is only ever used by one thread, and SQLite's per-call locking costs
// about a sixth of a scan of millions of rows.
Database::Database(const std::filesystem::path& file) : file_(file) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
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

namespace {

struct ScanContext {
  const std::function<void(const RowValues&)>* row;
  ScanSource source;
  std::exception_ptr error;
};

void scan_row(sqlite3_context* context, int, sqlite3_value** values) {
  auto* scan = static_cast<ScanContext*>(sqlite3_user_data(context));
  try {
    (*scan->row)(RowValues(values, scan->source));
    sqlite3_result_int(context, 0);
  } catch (...) {
    // Never let an exception cross SQLite's C frames: stop the query, rethrow afterwards.
    scan->error = std::current_exception();
    sqlite3_result_error(context, "nsel scan stopped", -1);
  }
}

}  // namespace

void Database::scan(const std::string& table, const std::vector<std::string>& expressions,
                    const std::string& order_by,
                    const std::function<void(const RowValues&)>& row) const {
  ScanContext context{&row, {&file_, table, &expressions}, nullptr};
  if (sqlite3_create_function_v2(db_.get(), "nsel_scan_row", static_cast<int>(expressions.size()),
                                 SQLITE_UTF8, &context, scan_row, nullptr, nullptr,
                                 nullptr) != SQLITE_OK) {
    throw Error(quote(file_.string()) + ": cannot read (" + sqlite3_errmsg(db_.get()) + ")", 1);
  }
  std::string inner;
  std::string arguments;
  for (std::size_t i = 0; i < expressions.size(); ++i) {
    inner += (i ? ", " : "") + expressions[i] + " AS c" + std::to_string(i);
    arguments += (i ? ", c" : "c") + std::to_string(i);
  }
  // The function sits in WHERE, so no row is ever returned. Sorted rows come from a subquery
  // that LIMIT keeps from being flattened, so the function sees them in order.
  const std::string sql =
      order_by.empty() ? "SELECT count(*) FROM (SELECT " + inner + " FROM " + table +
                             ") WHERE nsel_scan_row(" + arguments + ")"
                       : "SELECT count(*) FROM (SELECT " + inner + " FROM " + table + " ORDER BY " +
                             order_by + " LIMIT -1) WHERE nsel_scan_row(" + arguments + ")";
  Statement statement = prepare(sql);
  try {
    while (statement.step()) {
    }
  } catch (const Error&) {
    if (!context.error) throw;
  }
  if (context.error) std::rethrow_exception(context.error);
}

}  // namespace nsel::analyze
