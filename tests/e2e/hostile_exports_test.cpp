// The real nsel binary on hostile inputs and stopped mid-export: an export holding text where a
// number belongs, an empty file or another program's database named .sqlite fail that report
// with one line and exit code 1 (never a crash); SIGTERM while `nsys export` runs ends nsys and
// leaves no temporary file. Real captures from ../shared/gpu-reports, copied into a temporary
// folder first (skipped where that folder is absent).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

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
  const auto started = nsel::test::start({NSEL_BINARY, "report", "--quiet", report.string()}, {});
  // Wait for nsys export, a child of nsel, and its temporary output beside the report.
  const auto writing = [&] {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().filename().string().find(".tmp-") != std::string::npos) return true;
    }
    return false;
  };
  std::vector<pid_t> exporters;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((exporters.empty() || !writing()) && std::chrono::steady_clock::now() < deadline &&
         fs::exists("/proc/" + std::to_string(started.pid) + "/task")) {
    exporters = children_of(started.pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (exporters.empty() || !writing()) {
    const auto result = nsel::test::finish(started);
    GTEST_SKIP() << "nsel ended before nsys export was seen writing (exit " << result.exit_code
                 << ")";
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

}  // namespace
