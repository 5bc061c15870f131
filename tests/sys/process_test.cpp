#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nsel/core/error.hpp"
#include "nsel/sys/proc.hpp"
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

TEST(RunInChild, ReturnsTheChildsAnswerAndBoundsItsTime) {
  const nsel::ChildAnswer answer = nsel::run_in_child(
      [] { return std::string("from ") + "the child"; }, std::chrono::seconds(5));
  EXPECT_EQ(answer.output, "from the child");
  EXPECT_FALSE(answer.timed_out);
  EXPECT_TRUE(answer.problem.empty());
  const nsel::ChildAnswer hung = nsel::run_in_child(
      [] {
        pause();
        return std::string("never");
      },
      std::chrono::milliseconds(100));
  EXPECT_TRUE(hung.timed_out);
  EXPECT_EQ(hung.output, "");
}

TEST(RunLogged, WritesTheOutputToTheLogAndGivesTheExitCode) {
  const fs::path log = fs::temp_directory_path() / ("nsel-logged-" + std::to_string(getpid()));
  const nsel::LoggedRun run =
      nsel::run_logged({"/bin/sh", "-c", "echo out; echo err >&2; exit 4"}, log);
  EXPECT_EQ(run.exit_code, 4);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "out\nerr\n");
  fs::remove(log);
  EXPECT_EQ(nsel::run_logged({"/nonexistent/program"}, log).exit_code, -1);
  fs::remove(log);
}

TEST(ProcessEnvironment, AnotherProcessesStartingEnvironmentIsRead) {
  const pid_t child = nsel::spawn_process({"/bin/sh", "-c", "sleep 30"}, {"NSEL_TEST_VALUE=a=b c"},
                                          "", nsel::ChildOutput::discard, true);
  usleep(100 * 1000);
  EXPECT_TRUE(nsel::process_environment_readable(child));
  EXPECT_EQ(nsel::process_environment_variable(child, "NSEL_TEST_VALUE"), "a=b c");
  EXPECT_EQ(nsel::process_environment_variable(child, "NSEL_TEST_VALU"), std::nullopt);
  EXPECT_EQ(nsel::process_environment_variable(child, "NSEL_TEST_VALUE_NOT_SET"), std::nullopt);
  kill(-child, SIGKILL);
  nsel::wait_exit_code(child);
  EXPECT_EQ(nsel::process_environment_variable(child, "NSEL_TEST_VALUE"), std::nullopt)
      << "a process that is gone has no environment";
}

TEST(ProcessOpenFiles, TheFilesAProcessHoldsOpenAreListed) {
  const fs::path file = fs::temp_directory_path() / ("nsel-open-" + std::to_string(getpid()));
  std::ofstream held(file);
  ASSERT_TRUE(held);
  const auto files = nsel::process_open_files(getpid());
  EXPECT_NE(std::find(files.begin(), files.end(), file), files.end());
  EXPECT_TRUE(nsel::process_open_files(-1).empty());
  held.close();
  fs::remove(file);
}
