#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "nsel/analyze/step_ranges.hpp"
#include "nsel/core/error.hpp"

namespace fs = std::filesystem;

namespace {

// A minimal export with the tables and columns nsys 2022.4 writes for NVTX.
fs::path make_export(const std::string& sql) {
  const fs::path path =
      fs::temp_directory_path() / ("nsel-steps-" + std::to_string(getpid()) + ".sqlite");
  fs::remove(path);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << error;
  sqlite3_close(db);
  return path;
}

}  // namespace

TEST(StepRanges, ReadsStepRangesByNameAndTextId) {
  const fs::path path = make_export(
      "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
      "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, "
      "textId INTEGER);"
      "INSERT INTO StringIds VALUES (1, 'step 3');"
      "INSERT INTO NVTX_EVENTS VALUES (300, 400, 59, NULL, 1);"
      "INSERT INTO NVTX_EVENTS VALUES (100, 200, 59, 'step 2', NULL);"
      "INSERT INTO NVTX_EVENTS VALUES (90, 450, 60, 'nsel_capture', NULL);"
      "INSERT INTO NVTX_EVENTS VALUES (150, 160, 59, 'step 2 forward', NULL);"
      "INSERT INTO NVTX_EVENTS VALUES (500, NULL, 59, 'step 4', NULL);");
  const auto steps = nsel::read_step_ranges(path);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].step, 2);
  EXPECT_EQ(steps[0].start_ns, 100);
  EXPECT_EQ(steps[1].step, 3);
  EXPECT_EQ(steps[1].end_ns, 400);
  EXPECT_FALSE(steps[1].cut);
  // Never closed: cut by the end of capture, ending at the export's last NVTX time.
  EXPECT_EQ(steps[2].step, 4);
  EXPECT_TRUE(steps[2].cut);
  EXPECT_EQ(steps[2].end_ns, 500);
  EXPECT_EQ(nsel::describe_steps(steps), "2-3 (2 steps), 4 cut");
  fs::remove(path);
}

// A program stopped by a signal inside a step: nsys closes that step at teardown, with the
// capture's other open ranges, at the capture's last NVTX time. Only then is such a step cut.
TEST(StepRanges, AStepClosedAtTeardownAfterAStopIsCut) {
  const fs::path path = make_export(
      "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, "
      "textId INTEGER);"
      "INSERT INTO NVTX_EVENTS VALUES (90, 606, 60, 'nsel_capture', NULL);"
      "INSERT INTO NVTX_EVENTS VALUES (100, 400, 59, 'step 2', NULL);"
      "INSERT INTO NVTX_EVENTS VALUES (402, 606, 59, 'step 3', NULL);");
  const auto stopped = nsel::read_step_ranges(path, true);
  ASSERT_EQ(stopped.size(), 2u);
  EXPECT_FALSE(stopped[0].cut);
  EXPECT_TRUE(stopped[1].cut);
  EXPECT_EQ(nsel::describe_steps(stopped), "2 (1 step), 3 cut");
  const auto ended = nsel::read_step_ranges(path);  // a normal end: the step is whole
  EXPECT_FALSE(ended[1].cut);
  fs::remove(path);
}

TEST(StepRanges, NoNvtxTableMeansNoSteps) {
  const fs::path path = make_export("CREATE TABLE OTHER (x INTEGER);");
  EXPECT_TRUE(nsel::read_step_ranges(path).empty());
  EXPECT_EQ(nsel::describe_steps({}), "none");
  fs::remove(path);
}

TEST(StepRanges, DescribesRuns) {
  EXPECT_EQ(nsel::describe_steps({{5, 0, 1}}), "5 (1 step)");
  EXPECT_EQ(nsel::describe_steps({{2, 0, 1}, {3, 1, 2}, {7, 2, 3}}), "2-3,7 (3 steps)");
}

TEST(StepRanges, NotADatabaseIsAnError) {
  const fs::path path = fs::temp_directory_path() / ("nsel-notdb-" + std::to_string(getpid()));
  FILE* f = fopen(path.c_str(), "w");
  fputs("this is not sqlite, just text long enough to have a header..........................", f);
  fclose(f);
  EXPECT_THROW(nsel::read_step_ranges(path), nsel::Error);
  fs::remove(path);
}
