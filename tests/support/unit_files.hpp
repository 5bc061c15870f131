// What unit tests that build small files share (header only: unit tests link their room alone).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace nsel::test {

// An empty folder <temp>/nsel-<suite>-<label>-<pid>, made anew.
inline std::filesystem::path fresh_dir(const std::string& suite, const std::string& label) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("nsel-" + suite + "-" + label + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs `sql` on the SQLite file `db_path` (created with its folder when missing).
inline void execute_sql(const std::filesystem::path& db_path, const std::string& sql) {
  if (db_path.has_parent_path()) std::filesystem::create_directories(db_path.parent_path());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

}  // namespace nsel::test
