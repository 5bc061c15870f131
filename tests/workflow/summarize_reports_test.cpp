// nsel report's pipeline without the nsel binary: small SQLite exports and a report nsys cannot
// export, summarised, compared, told in order and written out; each answer is checked against the
// analyze room's own functions on the same files.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "nsel/analyze/comparison.hpp"
#include "nsel/analyze/exports.hpp"
#include "nsel/core/error.hpp"
#include "nsel/reports/report_files.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/nsys_installs.hpp"
#include "nsel/sys/process.hpp"
#include "nsel/workflow/summarize_reports.hpp"
#include "unit_files.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& label) {
  return nsel::test::fresh_dir("summarize", label);
}

void execute(const fs::path& db_path, const std::string& sql) {
  nsel::test::execute_sql(db_path, sql);
}

// An export of a process that ran steps 1 and 2, with step 2 taking `step2_ns`.
void write_export(const fs::path& file, long long step2_ns) {
  execute(file,
          "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, "
          "text TEXT, globalTid INTEGER);"
          "INSERT INTO NVTX_EVENTS VALUES (100, 300, 59, 'step 1', 5), "
          "(120, 200, 59, 'forward', 5), (300, " +
              std::to_string(300 + step2_ns) + ", 59, 'step 2', 5), (310, 400, 59, 'forward', 5);");
}

std::function<std::optional<std::string>(std::string_view)> path_only(const std::string& path) {
  return [path](std::string_view name) -> std::optional<std::string> {
    if (name == "PATH") return path;
    return std::nullopt;
  };
}

}  // namespace

TEST(SummarizeReports, SummarisesComparesTellsAndWrites) {
  const fs::path dir = fresh_dir("set");
  // Path order (x/ before y/) is not label order (pid 100 before 300).
  const fs::path slow = dir / "x/dtensor_policy_worker_1:3_300.sqlite";
  const fs::path fast = dir / "y/dtensor_policy_worker_1:3_100.sqlite";
  write_export(slow, 400);
  write_export(fast, 200);
  // Not a report at all, and a "report" that nsys (here a stand-in that fails) cannot export.
  const fs::path junk = dir / "x/junk.sqlite";
  std::ofstream(junk) << "not a database at all, just some text that is long enough";
  const fs::path broken = dir / "z/broken_worker_1:3_7.nsys-rep";
  fs::create_directories(broken.parent_path());
  std::ofstream(broken) << "not a report";
  fs::create_directories(dir / "bin");
  // It answers --version as 2022.4 does, so that the search takes it (first, from PATH).
  std::ofstream(dir / "bin/nsys")
      << "#!/bin/sh\n[ \"$1\" = --version ] && echo 'NVIDIA Nsight Systems version "
         "2022.4.2.1-df9881f' && exit 0\nexit 3\n";
  fs::permissions(dir / "bin/nsys", fs::perms::owner_all);

  nsel::ReportRequest request;
  request.paths = {dir};
  request.jobs = 2;
  request.straggler_percent = 20;
  request.cache_dir = dir / "cache";
  request.environment = path_only((dir / "bin").string());

  std::mutex mutex;
  std::vector<std::string> events;
  const auto tell = [&](const std::string& event) {
    std::lock_guard<std::mutex> lock(mutex);
    events.push_back(event);
  };
  std::size_t found = 0;
  std::size_t read = 0;
  nsel::ReportProgress progress;
  progress.found = [&](std::size_t n) {
    found = n;
    tell("found");
  };
  progress.exporting = [&](const fs::path& report) { tell("exporting " + report.string()); };
  progress.read = [&](const fs::path&) {
    std::lock_guard<std::mutex> lock(mutex);
    ++read;
  };
  progress.all_read = [&] { tell("all read"); };
  progress.failed = [&](const nsel::ReportFailure& f) { tell("failed " + f.report.string()); };
  const nsel::ReportSet set = nsel::summarize_reports(request, progress);

  const std::vector<fs::path> reports = nsel::find_report_files({dir});
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(found, reports.size());
  EXPECT_EQ(read, reports.size());
  EXPECT_EQ(events,
            (std::vector<std::string>{"found", "exporting " + broken.string(), "all read",
                                      "failed " + junk.string(), "failed " + broken.string()}));

  // The failures are what the analyze room says of each file, in the reports' order.
  nsel::ExportSettings exports;
  exports.nsys = (dir / "bin/nsys").string();
  exports.cache_dir = request.cache_dir;
  const auto message_of = [&](const fs::path& report) -> std::string {
    try {
      nsel::summarize_export(nsel::ensure_export(report, exports).file, {});
    } catch (const nsel::Error& e) {
      return e.what();
    }
    return "";
  };
  ASSERT_EQ(set.failures.size(), 2u);
  EXPECT_EQ(set.failures[0].report, junk);
  EXPECT_EQ(set.failures[0].message, message_of(junk));
  EXPECT_EQ(set.failures[1].report, broken);
  EXPECT_EQ(set.failures[1].message, message_of(broken));

  // The processes, sorted by label, are the summaries of their exports.
  ASSERT_EQ(set.processes.size(), 2u);
  std::vector<nsel::ProcessSummary> expected;
  for (const fs::path& file : {fast, slow}) {
    nsel::ProcessSummary summary = nsel::summarize_export(file, {});
    summary.identity = nsel::identify_report(file);
    summary.report = file;
    expected.push_back(summary);
  }
  ASSERT_LT(expected[0].identity.label(), expected[1].identity.label());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(set.processes[i].report, expected[i].report);
    EXPECT_EQ(set.processes[i].identity.label(), expected[i].identity.label());
    ASSERT_EQ(set.processes[i].steps.size(), expected[i].steps.size());
    for (std::size_t s = 0; s < expected[i].steps.size(); ++s) {
      EXPECT_EQ(set.processes[i].steps[s].duration_ns(), expected[i].steps[s].duration_ns());
    }
  }
  const nsel::StepComparison comparison = nsel::compare_steps(expected, 20);
  ASSERT_EQ(set.comparison.steps.size(), comparison.steps.size());
  for (std::size_t s = 0; s < comparison.steps.size(); ++s) {
    EXPECT_EQ(set.comparison.steps[s].median_ns, comparison.steps[s].median_ns);
    EXPECT_EQ(set.comparison.steps[s].slowest, comparison.steps[s].slowest);
    EXPECT_EQ(set.comparison.steps[s].stragglers, comparison.steps[s].stragglers);
  }
  EXPECT_EQ(set.comparison.straggler_percent, 20);

  // The pipeline computes; it writes no page and no table (the render room does).
  EXPECT_FALSE(fs::exists(dir / "page.html"));
  fs::remove_all(dir);
}

TEST(SummarizeReports, NothingToReadIsAnErrorBeforeAnyProgress) {
  const fs::path dir = fresh_dir("empty");
  bool told = false;
  nsel::ReportProgress progress;
  progress.found = [&](std::size_t) { told = true; };
  nsel::ReportRequest request;
  request.paths = {dir};
  request.environment = path_only("");
  try {
    nsel::summarize_reports(request, progress);
    FAIL();
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "no reports (.nsys-rep) or exports (.sqlite) found under '" + dir.string() + "'");
    EXPECT_EQ(e.exit_code(), 1);
  }

  // A report needs nsys; without one on PATH or in the known install folders nothing is read.
  const fs::path report = dir / "w_1:3_5.nsys-rep";
  std::ofstream(report) << "x";
  if (!nsel::find_nsys_installs(std::nullopt, "").empty()) {
    // This machine has one in a known folder: it is used, and the report is a failure of its own.
    const nsel::ReportSet set = nsel::summarize_reports(request, {});
    ASSERT_EQ(set.failures.size(), 1u);
    EXPECT_EQ(set.failures[0].report, report);
    fs::remove_all(dir);
    return;
  }
  try {
    nsel::summarize_reports(request, progress);
    FAIL();
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "no nsys found (on PATH or in the known install folders): it is needed to export '" +
                  report.string() +
                  "'; install Nsight Systems (or set NSEL_NSYS), or pass .sqlite exports");
    EXPECT_EQ(e.exit_code(), 1);
  }
  EXPECT_FALSE(told);
  fs::remove_all(dir);
}
