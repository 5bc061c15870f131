// What the end-to-end suites of reports and of nsel sync share: real nsys reports and manifests
// made once per build of nsel (kept in the build folder), copies of them placed in trees, and
// nsel started in the background.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace nsel::e2e {

// Copies `from` to `to` and dates it `age` ago (old files are finished files).
void place(const std::filesystem::path& from, const std::filesystem::path& to,
           std::chrono::seconds age = std::chrono::seconds(600));

// What the tests share: one real report with its manifest from `nsel exec`, one manifest of a
// worker whose window never came, and one real .qdstrm from an nsys that has no importer.
struct RealFiles {
  std::filesystem::path dir;
  std::filesystem::path report;
  std::filesystem::path manifest;
  std::filesystem::path missing_manifest;
  std::filesystem::path qdstrm;
  std::string exec_err;
};

const RealFiles& real_files();

class Reports : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const RealFiles& f = real_files();
    ASSERT_TRUE(std::filesystem::is_regular_file(f.report)) << f.exec_err;
    ASSERT_TRUE(std::filesystem::is_regular_file(f.manifest)) << f.exec_err;
    ASSERT_TRUE(std::filesystem::is_regular_file(f.missing_manifest));
    ASSERT_TRUE(std::filesystem::is_regular_file(f.qdstrm));
  }
};

// `argv` started with `env` added and its standard streams on /dev/null.
pid_t start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);

// Waits up to `limit` for `child`; its wait status, or -1 when it is still running.
int wait_for(pid_t child, std::chrono::milliseconds limit);

}  // namespace nsel::e2e
