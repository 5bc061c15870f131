// Exports are input files, and an export beside a report may be anyone's: every value the
// summary reads is checked. A value of the wrong type or range fails that export with one line
// naming the file, the table and column and the value (exit code 1), never a crash and never a
// wrong number; a file that is no Nsight Systems export is named as such.
#include <gtest/gtest.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <string>

#include "nsel/analyze/summary.hpp"
#include "nsel/core/error.hpp"
#include "unit_files.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kShared = fs::path(NSEL_SOURCE_DIR) / "../shared/gpu-reports";

// The one-line error summarize_export gives for `file`, or "" when it succeeds.
std::string summary_error(const fs::path& file) {
  try {
    nsel::summarize_export(file, nsel::SummaryOptions{});
  } catch (const nsel::Error& e) {
    EXPECT_EQ(e.exit_code(), 1);
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind(nsel::quote(file.string()) + ": ", 0), 0u) << message;
    return message;
  }
  return "";
}

const char* kNvtx =
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
    "INSERT INTO StringIds VALUES (1, 'step 1'), (2, 'forward');"
    "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, textId INTEGER, "
    "globalTid INTEGER, text TEXT);"
    "INSERT INTO NVTX_EVENTS VALUES (100, 300, 59, 1, 7, NULL), (120, 200, 59, 2, 7, NULL);";

TEST(HostileExport, AValueOfTheWrongTypeNamesTheFileColumnAndValue) {
  const fs::path dir = nsel::test::fresh_dir("hostile", "types");
  struct Case {
    const char* name;
    std::string sql;
    std::string expected;  // part of the message
  };
  const Case cases[] = {
      {"text_start", "UPDATE NVTX_EVENTS SET start = 'abc' WHERE rowid = 1",
       "NVTX_EVENTS.start holds 'abc' where a whole number belongs"},
      {"text_textid", "UPDATE NVTX_EVENTS SET textId = 'abc' WHERE rowid = 2",
       "NVTX_EVENTS.textId holds 'abc'"},
      {"text_end", "UPDATE NVTX_EVENTS SET end = 'x' WHERE rowid = 2", "NVTX_EVENTS.end holds 'x'"},
      {"real_tid", "UPDATE NVTX_EVENTS SET globalTid = 1.5 WHERE rowid = 2",
       "NVTX_EVENTS.globalTid holds 1.5"},
      {"text_type", "UPDATE NVTX_EVENTS SET eventType = 'push' WHERE rowid = 2",
       "NVTX_EVENTS.eventType holds 'push'"},
      {"null_start", "UPDATE NVTX_EVENTS SET start = NULL WHERE rowid = 2",
       "NVTX_EVENTS.start holds NULL"},
      {"blob_start", "UPDATE NVTX_EVENTS SET start = x'0102' WHERE rowid = 2",
       "NVTX_EVENTS.start holds a blob of 2 bytes"},
      {"end_before_start", "UPDATE NVTX_EVENTS SET end = 110 WHERE rowid = 2",
       "NVTX_EVENTS.end holds 110 where an end not before its start 120 belongs"},
      {"far_time", "UPDATE NVTX_EVENTS SET end = " + std::to_string(LLONG_MAX) + " WHERE rowid = 2",
       "NVTX_EVENTS.end holds 9223372036854775807 where a time in ns within 2^61 belongs"},
      {"huge_name", "UPDATE StringIds SET value = hex(zeroblob(1000001)) WHERE id = 2",
       "StringIds.value holds '0000"},
  };
  for (const Case& c : cases) {
    const fs::path file = dir / (std::string(c.name) + ".sqlite");
    nsel::test::execute_sql(file, std::string(kNvtx) + c.sql + ";");
    const std::string message = summary_error(file);
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.name << ": " << message;
  }
  // Untouched, the same export reads.
  nsel::test::execute_sql(dir / "good.sqlite", kNvtx);
  EXPECT_EQ(summary_error(dir / "good.sqlite"), "");
  fs::remove_all(dir);
}

TEST(HostileExport, GpuAndOsrtValuesAreCheckedToo) {
  const fs::path dir = nsel::test::fresh_dir("hostile", "gpu");
  const std::string kernels =
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, demangledName INTEGER, "
      "deviceId INTEGER, globalPid INTEGER);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20, 1, 0, 5);";
  nsel::test::execute_sql(dir / "kernel_end.sqlite",
                          kernels + "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = 'soon';");
  EXPECT_NE(summary_error(dir / "kernel_end.sqlite").find("CUPTI_ACTIVITY_KIND_KERNEL.end holds"),
            std::string::npos);
  nsel::test::execute_sql(dir / "kernel_device.sqlite",
                          kernels + "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 'gpu0';");
  EXPECT_NE(
      summary_error(dir / "kernel_device.sqlite").find("CUPTI_ACTIVITY_KIND_KERNEL.deviceId holds"),
      std::string::npos);
  nsel::test::execute_sql(dir / "memcpy.sqlite",
                          kernels +
                              // Copies are read for the steps' GPU time: a step is needed.
                              "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType "
                              "INTEGER, text TEXT); INSERT INTO NVTX_EVENTS VALUES (0, 100, 59, "
                              "'step 1');"
                              "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end "
                              "INTEGER); INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (50, 40);");
  EXPECT_NE(summary_error(dir / "memcpy.sqlite")
                .find("CUPTI_ACTIVITY_KIND_MEMCPY.end holds 40 where an end not before"),
            std::string::npos);
  nsel::test::execute_sql(dir / "osrt.sqlite",
                          "CREATE TABLE OSRT_API (start INTEGER, end INTEGER, nameId INTEGER);"
                          "INSERT INTO OSRT_API VALUES (10, 'later', 1);");
  EXPECT_NE(summary_error(dir / "osrt.sqlite").find("OSRT_API.end holds 'later'"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(HostileExport, DurationsThatAddUpPastALongLongFailInsteadOfWrapping) {
  const fs::path dir = nsel::test::fresh_dir("hostile", "sum");
  const long long far = 1LL << 61;
  const std::string range =
      "(" + std::to_string(-far) + ", " + std::to_string(far) + ", 59, 'r', 7)";
  nsel::test::execute_sql(dir / "sum.sqlite",
                          "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType "
                          "INTEGER, text TEXT, globalTid INTEGER);"
                          "INSERT INTO NVTX_EVENTS VALUES " +
                              range + ", " + range + ";");
  EXPECT_NE(summary_error(dir / "sum.sqlite").find("durations add up past 2^63 ns"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(HostileExport, AnEmptyFileOrAnotherDatabaseIsNotAnExport) {
  const fs::path dir = nsel::test::fresh_dir("hostile", "foreign");
  std::ofstream(dir / "empty.sqlite").flush();
  EXPECT_NE(summary_error(dir / "empty.sqlite").find("is not an Nsight Systems export: empty file"),
            std::string::npos);
  nsel::test::execute_sql(dir / "foreign.sqlite",
                          "CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('a');");
  EXPECT_NE(summary_error(dir / "foreign.sqlite").find("is not an Nsight Systems export"),
            std::string::npos);
  std::ofstream(dir / "text.sqlite") << "hello";
  EXPECT_NE(summary_error(dir / "text.sqlite"), "");
  fs::remove_all(dir);
}

// The crash of issue 22: a real export with one start made text.
TEST(HostileExport, ARealExportWithATextStartFailsWithOneLine) {
  const fs::path real = kShared / "extrap-windows/profile4.sqlite";
  if (!fs::exists(real)) GTEST_SKIP() << real << " is absent (real GPU captures)";
  const fs::path dir = nsel::test::fresh_dir("hostile", "real");
  fs::copy_file(real, dir / "profile4.sqlite");
  fs::permissions(dir / "profile4.sqlite", fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(summary_error(dir / "profile4.sqlite"), "");
  nsel::test::execute_sql(dir / "profile4.sqlite",
                          "UPDATE NVTX_EVENTS SET start = 'abc' WHERE rowid = 1;");
  EXPECT_NE(summary_error(dir / "profile4.sqlite").find("NVTX_EVENTS.start holds 'abc'"),
            std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
