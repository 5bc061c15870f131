#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "nsel/core/error.hpp"
#include "nsel/sys/process.hpp"

namespace fs = std::filesystem;

TEST(ResolveProgram, FindsOnPathAsExecvpDoes) {
  EXPECT_EQ(nsel::resolve_program("sh", "/nonexistent:/bin:/usr/bin"), "/bin/sh");
  EXPECT_EQ(nsel::resolve_program("/bin/sh", ""), "/bin/sh");
}

TEST(ResolveProgram, RelativePathsBecomeAbsolute) {
  const fs::path dir = fs::temp_directory_path() / ("nsel-resolve-" + std::to_string(getpid()));
  fs::create_directories(dir / "bin");
  const fs::path tool = dir / "bin" / "tool";
  std::ofstream(tool) << "#!/bin/sh\n";
  fs::permissions(tool, fs::perms::owner_all);
  std::ofstream(dir / "bin" / "not_executable") << "x";
  const fs::path old = fs::current_path();
  fs::current_path(dir);
  EXPECT_EQ(nsel::resolve_program("bin/tool", ""), (dir / "bin" / "tool").string());
  EXPECT_EQ(nsel::resolve_program("tool", "bin"), (dir / "bin" / "tool").string());
  EXPECT_THROW(nsel::resolve_program("not_executable", "bin"), nsel::Error);
  fs::current_path(old);
  fs::remove_all(dir);
}

TEST(ResolveProgram, MissingProgramIsAClearError) {
  try {
    nsel::resolve_program("no-such-program-xyz", "/bin");
    FAIL();
  } catch (const nsel::Error& e) {
    EXPECT_STREQ(e.what(),
                 "PROGRAM='no-such-program-xyz': not found on PATH; expected a program on PATH or "
                 "a path to one");
    EXPECT_EQ(e.exit_code(), 2);
  }
}

TEST(SpawnProcess, ExitCodesAndExtraEnvironmentReachTheCaller) {
  EXPECT_EQ(nsel::wait_exit_code(nsel::spawn_process({"/bin/sh", "-c", "exit 7"})), 7);
  EXPECT_EQ(nsel::wait_exit_code(nsel::spawn_process({"/bin/sh", "-c", "kill -TERM $$"})),
            128 + 15);
  EXPECT_EQ(nsel::wait_exit_code(nsel::spawn_process(
                {"/bin/sh", "-c", "test \"$NSEL_TEST_VALUE\" = 'a b'"}, {"NSEL_TEST_VALUE=a b"})),
            0);
  EXPECT_EQ(nsel::run_quietly({"/bin/sh", "-c", "echo hidden; exit 3"}), 3);
}
