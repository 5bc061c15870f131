// The demo's checks before anything exists (the run itself needs the nsel binary beside it and is
// tested end to end in integration_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "nsel/core/error.hpp"
#include "nsel/sys/process.hpp"
#include "nsel/workflow/demo.hpp"

namespace fs = std::filesystem;

TEST(RunDemo, ARootThatIsNotAFolderStopsItBeforeAnythingIsSet) {
  const fs::path file =
      fs::temp_directory_path() / ("nsel-workflow-demo-root-" + std::to_string(::getpid()));
  std::ofstream(file) << "x";
  unsetenv("NRL_NSYS_WORKER_PATTERNS");
  unsetenv("NRL_NSYS_PROFILE_STEP_RANGE");
  nsel::DemoRequest request;
  request.root = file;
  std::vector<std::string> told;
  try {
    nsel::run_demo(request, [&](const std::string& line) { told.push_back(line); });
    FAIL();
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              nsel::bad_value("--root", file.string(), "not a folder",
                              "a folder for the sessions (created if missing)"));
    EXPECT_EQ(e.exit_code(), 2);
  }
  EXPECT_TRUE(told.empty());
  EXPECT_EQ(std::getenv("NRL_NSYS_WORKER_PATTERNS"), nullptr);
  fs::remove(file);
}

// Without the example worker beside this executable the demo stops before any session exists.
TEST(RunDemo, AMissingExampleWorkerStopsItBeforeTheSession) {
  const fs::path root =
      fs::temp_directory_path() / ("nsel-workflow-demo-" + std::to_string(::getpid()));
  fs::remove_all(root);
  ASSERT_FALSE(fs::exists(fs::path(nsel::self_executable()).parent_path() / "nsel-example-worker"));
  nsel::DemoRequest request;
  request.root = root;
  try {
    nsel::run_demo(request, [](const std::string&) {});
    FAIL();
  } catch (const nsel::Error& e) {
    EXPECT_EQ(e.exit_code(), 1);
    EXPECT_TRUE(std::string(e.what()).starts_with("the example worker ")) << e.what();
  }
  EXPECT_FALSE(fs::exists(root));
}
