#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

// The PID namespace and the ids in it: this process is in its own namespace under its own id,
// and a child in a new PID namespace is seen there as its id 1 (root only).
TEST(NamespaceProcesses, EveryProcessSeenIsUnderItsOwnNamespacesId) {
  const auto own = nsel::own_pid_namespace();
  ASSERT_TRUE(own.has_value());
  const nsel::NamespaceProcesses seen = nsel::read_namespace_processes();
  ASSERT_TRUE(seen.pids.count(*own)) << "this process's namespace is not listed";
  EXPECT_TRUE(seen.pids.at(*own).count(::getpid()));
  const auto boot = nsel::kernel_boot_id();
  ASSERT_TRUE(boot.has_value());
  EXPECT_EQ(boot->size(), 36u) << *boot;  // a UUID's text

  if (::geteuid() != 0) GTEST_SKIP() << "a new PID namespace needs root";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child makes a namespace and a process in it (id 1 there) that waits to be looked at.
    ::close(ready[0]);
    if (::unshare(CLONE_NEWPID) != 0) ::_exit(3);
    const pid_t inner = ::fork();
    if (inner == 0) {
      char byte = 1;
      if (::write(ready[1], &byte, 1) != 1) ::_exit(4);
      ::pause();
      ::_exit(0);
    }
    ::close(ready[1]);
    int status = 0;
    ::waitpid(inner, &status, 0);
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte = 0;
  const bool started = ::read(ready[0], &byte, 1) == 1;
  ::close(ready[0]);
  std::optional<unsigned long long> inner_namespace;
  pid_t inner_here = 0;
  if (started) {
    for (pid_t pid : nsel::child_processes(child)) {
      const auto link = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/pid");
      inner_here = pid;
      inner_namespace = std::stoull(link.string().substr(5));
    }
  }
  const nsel::NamespaceProcesses now = nsel::read_namespace_processes();
  if (inner_here > 0) ::kill(inner_here, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!started) GTEST_SKIP() << "no PID namespaces here (exit " << WEXITSTATUS(status) << ")";
  ASSERT_TRUE(inner_namespace.has_value());
  EXPECT_NE(*inner_namespace, *own);
  ASSERT_TRUE(now.pids.count(*inner_namespace));
  EXPECT_EQ(now.pids.at(*inner_namespace), (std::set<long long>{1}));
}

namespace {

// Whether `pid` is gone or a zombie, within `tries` times 20 ms.
bool ended_within(pid_t pid, int tries) {
  for (int i = 0; i < tries; ++i) {
    if (::kill(pid, 0) != 0 || nsel::is_zombie(pid)) return true;
    usleep(20 * 1000);
  }
  return false;
}

}  // namespace

// The moment after a child is started and before its group is registered for a stop: glibc's
// posix_spawn holds signals back while the child opens its log (here a FIFO that nobody reads
// yet, so the child waits there) and delivers them the moment it returns. A SIGTERM held back
// then used to end the process at once, leaving the child running and writing the file that
// the stop was to remove (the replay's HostileExports failure: an export's temporary left).
TEST(StopCleanup, AStopHeldBackWhileAChildStartsEndsThatChildAndRemovesItsFile) {
  char pattern[] = "/tmp/nsel-stop-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  const fs::path log = dir / "log";
  const fs::path written = dir / "written";
  ASSERT_EQ(::mkfifo(log.c_str(), 0600), 0);
  const pid_t stopped = ::fork();
  ASSERT_GE(stopped, 0);
  if (stopped == 0) {
    const nsel::StopCleanup stop_cleanup;
    const nsel::RemovedOnStop removed(written);
    nsel::run_quietly_stoppable({"/bin/sh", "-c", "sleep 1; echo late > \"$0\"", written.string()},
                                log);
    ::_exit(0);  // never reached when the stop's cleanup ran
  }
  std::vector<pid_t> starting;
  for (int i = 0; i < 500 && starting.empty(); ++i) {
    starting = nsel::child_processes(stopped);
    if (starting.empty()) usleep(10 * 1000);
  }
  ASSERT_EQ(starting.size(), 1u) << "the child never started";
  ASSERT_EQ(::kill(stopped, SIGTERM), 0);
  usleep(100 * 1000);  // the signal is pending: nothing may happen before the child is registered
  const int reader = ::open(log.c_str(), O_RDONLY | O_NONBLOCK);  // lets the child's open go on
  ASSERT_GE(reader, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(stopped, &status, 0), stopped);
  ::close(reader);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_TRUE(ended_within(starting.front(), 50))
      << "the child started as the stop came (pid " << starting.front() << ") runs on";
  usleep(1500 * 1000);  // past the moment the child would have written
  EXPECT_FALSE(fs::exists(written)) << "the child wrote its file after nsel's cleanup";
  if (!ended_within(starting.front(), 1)) ::kill(-starting.front(), SIGKILL);
  fs::remove_all(dir);
}
