// The real nsel binary on hostile inputs and stopped mid-export: an export holding text where a
// number belongs, an empty file or another program's database named .sqlite fail that report
// with one line and exit code 1 (never a crash); SIGTERM while `nsys export` runs ends nsys and
// leaves no temporary file. Real captures from ../shared/gpu-reports, copied into a temporary
// folder first (skipped where that folder is absent).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"
#include "unit_files.hpp"

namespace fs = std::filesystem;
using nsel::test::run;

namespace {

const fs::path kReports = nsel::test::gpu_reports_dir(NSEL_SOURCE_DIR);

fs::path writable_copy(const fs::path& from, const fs::path& to) {
  fs::copy_file(from, to);
  fs::permissions(to, fs::perms::owner_read | fs::perms::owner_write);
  return to;
}

TEST(HostileExports, TextWhereANumberBelongsFailsTheReportWithOneLine) {
  NSEL_SKIP_WITHOUT_GPU_REPORTS(kReports);
  const fs::path dir = nsel::test::make_temp_dir("hostile-text");
  const fs::path good =
      writable_copy(kReports / "extrap-windows/profile4.sqlite", dir / "a.sqlite");
  const fs::path bad = writable_copy(good, dir / "b.sqlite");
  nsel::test::execute_sql(bad, "UPDATE NVTX_EVENTS SET start = 'abc' WHERE rowid = 1;");
  const std::string line = "'" + bad.string() +
                           "': not a readable Nsight Systems export: NVTX_EVENTS.start holds "
                           "'abc' where a whole number belongs";
  const auto report = run({NSEL_BINARY, "report", "--quiet", bad.string()}, {});
  EXPECT_EQ(report.exit_code, 1) << report.err;  // was SIGSEGV
  EXPECT_NE(report.err.find(line), std::string::npos) << report.err;
  const auto diff = run({NSEL_BINARY, "diff", good.string(), bad.string()}, {});
  EXPECT_EQ(diff.exit_code, 1) << diff.err;  // was "free(): invalid size", SIGABRT
  EXPECT_NE(diff.out.find(line) + diff.err.find(line), 2 * std::string::npos)
      << diff.out << diff.err;
  fs::remove_all(dir);
}

// An export killed by a file-size limit is named as such (before: "not a readable Nsight
// Systems report (export exited with 153)", blaming the report).
TEST(HostileExports, AnExportKilledByAFileSizeLimitIsNamed) {
  NSEL_SKIP_WITHOUT_GPU_REPORTS(kReports);
  const fs::path dir = nsel::test::make_temp_dir("fsize-export");
  const fs::path report =
      writable_copy(kReports / "ai-profiler-mnist/baseline_nvtx.nsys-rep", dir / "r.nsys-rep");
  const auto r = run({"/usr/bin/prlimit", "--fsize=100000", "--", NSEL_BINARY, "report", "--quiet",
                      report.string()},
                     {});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("': not exported: nsys "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" export was killed by SIGXFSZ (exit status 153), a file-size limit "
                       "(ulimit -f) below what the export writes"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("not a readable"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

TEST(HostileExports, AnEmptyFileOrAnotherDatabaseIsNotAnExport) {
  const fs::path dir = nsel::test::make_temp_dir("hostile-foreign");
  std::ofstream(dir / "empty.sqlite").flush();
  nsel::test::execute_sql(dir / "app.sqlite", "CREATE TABLE users (name TEXT);");
  for (const char* name : {"empty.sqlite", "app.sqlite"}) {
    const auto report = run({NSEL_BINARY, "report", "--quiet", (dir / name).string()}, {});
    EXPECT_EQ(report.exit_code, 1) << name;
    EXPECT_NE(report.err.find("'" + (dir / name).string() + "': is not an Nsight Systems export: "),
              std::string::npos)
        << report.err;
  }
  fs::remove_all(dir);
}

// The children of `pid` (from /proc/<pid>/task/*/children).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    pid_t child = 0;
    while (in >> child) out.push_back(child);
  }
  return out;
}

// Whether `pid` is gone (or a zombie its new parent has yet to reap), within a second.
bool ended(pid_t pid) {
  for (int i = 0; i < 50; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const std::size_t paren = text.rfind(')');
    if (!stat || paren == std::string::npos || text.substr(paren + 2, 1) == "Z") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(HostileExports, SigtermWhileNsysExportsEndsItAndLeavesNoTemporaryFile) {
  NSEL_SKIP_WITHOUT_GPU_REPORTS(kReports);
  const fs::path dir = nsel::test::make_temp_dir("stop-export");
  const fs::path report =
      writable_copy(kReports / "ai-profiler-mnist/baseline_nvtx.nsys-rep", dir / "r.nsys-rep");
  // Wait for nsys export, a child of nsel, and its temporary output beside the report. A run
  // that ends before it was seen (nothing to stop) is made again from a fresh copy, so that the
  // test always checks its claim, or fails saying why it could not.
  const auto writing = [&] {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().filename().string().find(".tmp-") != std::string::npos) return true;
    }
    return false;
  };
  std::vector<pid_t> exporters;
  nsel::test::Started started;
  for (int attempt = 1;; ++attempt) {
    started = nsel::test::start({NSEL_BINARY, "report", "--quiet", report.string()}, {});
    exporters.clear();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((exporters.empty() || !writing()) && std::chrono::steady_clock::now() < deadline &&
           fs::exists("/proc/" + std::to_string(started.pid) + "/task")) {
      exporters = children_of(started.pid);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!exporters.empty() && writing()) break;
    const auto result = nsel::test::finish(started);
    ASSERT_LT(attempt, 3) << "nsel ended " << attempt << " times before nsys export was seen "
                          << "writing (exit " << result.exit_code << ")";
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path() != report) fs::remove_all(entry.path());
    }
  }
  std::vector<pid_t> tree = exporters;
  for (std::size_t i = 0; i < tree.size(); ++i) {
    for (pid_t child : children_of(tree[i])) tree.push_back(child);
  }
  ASSERT_EQ(::kill(started.pid, SIGTERM), 0);
  const auto result = nsel::test::finish(started);
  EXPECT_EQ(result.exit_code, 128 + SIGTERM) << result.err;
  for (pid_t pid : tree) EXPECT_TRUE(ended(pid)) << "process " << pid << " remains";
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"r.nsys-rep"});
  fs::remove_all(dir);
}

// Whether any process's command line names `path` (one this test started and nsel should have
// ended), waited for up to a second.
bool a_process_names(const fs::path& path) {
  for (int i = 0; i < 50; ++i) {
    bool seen = false;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      std::ifstream in(entry.path() / "cmdline");
      const std::string words((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      if (words.find(path.string()) != std::string::npos) seen = true;
    }
    if (!seen) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// A stop signal at any moment of `nsel report` on a fresh report (finding nsys, starting
// nsys export, while it writes, after it ends, while the export is renamed and recorded, while
// it is read) ends nsel with 128 + the signal or lets it finish, and never leaves a temporary, a
// log or a process of it behind, only files a finished run leaves: the moments are spread over one
// measured run of the same command, with the Nsight Systems on PATH (both generations: this runs in
// each pass). The replay twice found
// `.r.nsel.sqlite.tmp-<pid>` left by a SIGTERM that came while nsys export started.
TEST(HostileExports, AStopSignalAtAnyMomentOfAnExportLeavesOnlyWhatAFinishedRunLeaves) {
  NSEL_SKIP_WITHOUT_GPU_REPORTS(kReports);
  const fs::path source = kReports / "ai-profiler-mnist/baseline_nvtx.nsys-rep";
  const fs::path dir = nsel::test::make_temp_dir("stop-moments");
  const auto names_in = [](const fs::path& folder) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  // One whole run: how long it takes, and what it leaves.
  fs::create_directories(dir / "whole");
  const fs::path whole = writable_copy(source, dir / "whole" / "r.nsys-rep");
  const auto began = std::chrono::steady_clock::now();
  const auto finished = run({NSEL_BINARY, "report", "--quiet", whole.string()}, {});
  const auto took = std::chrono::steady_clock::now() - began;
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  const std::vector<std::string> left_by_a_finished_run = names_in(dir / "whole");
  ASSERT_GT(left_by_a_finished_run.size(), 1u);  // the report, its export and its record
  constexpr int kMoments = 16;
  int stopped = 0;
  for (int k = 0; k < kMoments; ++k) {
    const fs::path folder = dir / std::to_string(k);
    fs::create_directories(folder);
    const fs::path report = writable_copy(source, folder / "r.nsys-rep");
    const auto started = nsel::test::start({NSEL_BINARY, "report", "--quiet", report.string()}, {});
    std::this_thread::sleep_for(took * k / kMoments);
    ::kill(started.pid, SIGTERM);
    const auto result = nsel::test::finish(started);
    const std::vector<std::string> left = names_in(folder);
    // Stopped before the export had its name: only the report. Stopped after (while it was
    // read): the export and its record too, complete, as a finished run leaves them. Never a
    // temporary or nsys's log.
    for (const std::string& name : left) {
      EXPECT_NE(std::find(left_by_a_finished_run.begin(), left_by_a_finished_run.end(), name),
                left_by_a_finished_run.end())
          << "'" << name << "' left by the run stopped at " << k << "/" << kMoments << " (exit "
          << result.exit_code << ")";
    }
    if (result.exit_code == 128 + SIGTERM) {
      ++stopped;
    } else {
      EXPECT_EQ(result.exit_code, 0) << result.err;
      EXPECT_EQ(left, left_by_a_finished_run) << "finished before the signal, at " << k;
    }
    EXPECT_FALSE(a_process_names(report)) << "a process of the run stopped at " << k << " remains";
  }
  // Most moments fall inside the run (the last ones may come after it ended).
  EXPECT_GE(stopped, kMoments / 2) << "the signal came after the run in most rounds";
  fs::remove_all(dir);
}

}  // namespace
