// write_file_atomically on paths that are not regular files: a device or a FIFO is written in
// place or refused, never replaced by a regular file; a folder is refused. Device nodes are made
// in a temporary folder (mknod, as root): the system's own /dev is never an output here.
#include "nsel/sys/files.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/sys/process.hpp"

namespace fs = std::filesystem;

namespace {

class SpecialOutputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nsel-files-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A character device node in dir_, or a skip where mknod is not allowed.
  bool device(const std::string& name, unsigned minor) {
    return ::mknod((dir_ / name).c_str(), S_IFCHR | 0666, makedev(1, minor)) == 0;
  }
  static bool is_char_device(const fs::path& p) {
    struct stat info {};
    return ::lstat(p.c_str(), &info) == 0 && S_ISCHR(info.st_mode);
  }
  std::string error_of(const fs::path& p, const std::string& text) {
    try {
      nsel::write_file_atomically(p, text);
    } catch (const nsel::Error& e) {
      EXPECT_EQ(e.exit_code(), 1);
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(SpecialOutputs, AFullDeviceFailsAndStaysADevice) {
  if (!device("full", 7)) GTEST_SKIP() << "mknod is not allowed here (not root)";
  const fs::path full = dir_ / "full";
  EXPECT_EQ(error_of(full, "page"),
            "cannot write " + nsel::quote(full.string()) + ": No space left on device");
  EXPECT_TRUE(is_char_device(full));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1)
      << "no temporary file left behind";
}

TEST_F(SpecialOutputs, ANullDeviceIsWrittenInPlace) {
  if (!device("null", 3)) GTEST_SKIP() << "mknod is not allowed here (not root)";
  EXPECT_EQ(error_of(dir_ / "null", "page"), "");
  EXPECT_TRUE(is_char_device(dir_ / "null"));
}

TEST_F(SpecialOutputs, AFifoIsWrittenToItsReaderOrRefusedWithoutOne) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(error_of(fifo, "page"),
            "cannot write " + nsel::quote(fifo.string()) + ": it is a named pipe with no reader");
  EXPECT_TRUE(fs::is_fifo(fifo));

  // With a reader: the text arrives through the pipe, which stays a pipe.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_EQ(error_of(fifo, "page"), "");
  char buffer[16] = {};
  EXPECT_EQ(::read(reader, buffer, sizeof buffer), 4);
  EXPECT_EQ(std::string(buffer, 4), "page");
  ::close(reader);
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(SpecialOutputs, AFolderIsRefused) {
  fs::create_directories(dir_ / "folder");
  EXPECT_EQ(error_of(dir_ / "folder", "page"),
            "cannot write " + nsel::quote((dir_ / "folder").string()) + ": it is a folder");
  EXPECT_TRUE(fs::is_directory(dir_ / "folder"));
}

TEST_F(SpecialOutputs, ARegularFileIsStillReplacedWhole) {
  std::ofstream(dir_ / "page.html") << "old and longer";
  EXPECT_EQ(error_of(dir_ / "page.html", "new"), "");
  std::ifstream in(dir_ / "page.html");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "new");
}

// The step record a profiled program appends to (the variable naming it may come from anyone):
// only a regular file that exists is written; nothing is created, no link followed, no FIFO
// waited on.
TEST_F(SpecialOutputs, AppendingWritesOnlyAnExistingRegularFileNeverThroughALink) {
  const fs::path record = dir_ / "record";
  EXPECT_FALSE(nsel::append_to_own_file(record, "opened\n"));
  EXPECT_FALSE(fs::exists(record)) << "a missing record is never created";
  { std::ofstream(record) << "controlled\n"; }
  EXPECT_TRUE(nsel::append_to_own_file(record, "opened\n"));
  std::ifstream in(record);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "controlled\nopened\n");

  const fs::path target = dir_ / "someone-elses";
  { std::ofstream(target) << "kept\n"; }
  fs::create_symlink(target, dir_ / "link");
  EXPECT_FALSE(nsel::append_to_own_file(dir_ / "link", "opened\n"));
  std::ifstream kept(target);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>()),
            "kept\n");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_FALSE(nsel::append_to_own_file(dir_ / "fifo", "opened\n")) << "no reader: not waited on";
  EXPECT_FALSE(nsel::append_to_own_file(dir_, "opened\n")) << "a folder";
}

// The start turns of nsys (launch/keeper.cpp): one holder at a time, a bounded wait, and a path
// that is not this user's regular file is never locked, followed or waited on.
TEST_F(SpecialOutputs, AFileLockHasOneHolderAndABoundedWait) {
  using namespace std::chrono_literals;
  const fs::path path = dir_ / "start.lock";
  nsel::FileLock first(path, 0ms);
  ASSERT_TRUE(first.held());
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  const auto asked = std::chrono::steady_clock::now();
  nsel::FileLock second(path, 100ms);
  const auto waited = std::chrono::steady_clock::now() - asked;
  EXPECT_FALSE(second.held());
  EXPECT_GE(waited, 100ms);
  EXPECT_LT(waited, 5s);
  // A wait the caller ends (a stop request) ends at once.
  int asked_times = 0;
  const auto stopped_at = std::chrono::steady_clock::now();
  nsel::FileLock stopped(path, 10s, [&] { return ++asked_times < 3; });
  EXPECT_FALSE(stopped.held());
  EXPECT_EQ(asked_times, 3);
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, 5s);
  first.release();
  EXPECT_FALSE(first.held());
  nsel::FileLock third(path, 0ms);
  EXPECT_TRUE(third.held()) << "released with the holder's descriptor";
  nsel::FileLock moved = std::move(third);
  EXPECT_TRUE(moved.held());
  EXPECT_FALSE(third.held());
}

TEST_F(SpecialOutputs, AFileLockNeverFollowsALinkNorWaitsOnAFifo) {
  using namespace std::chrono_literals;
  fs::create_symlink(dir_ / "target", dir_ / "link.lock");
  EXPECT_FALSE(nsel::FileLock(dir_ / "link.lock", 0ms).held());
  EXPECT_FALSE(fs::exists(dir_ / "target")) << "created through the link";
  ASSERT_EQ(::mkfifo((dir_ / "fifo.lock").c_str(), 0600), 0);
  EXPECT_FALSE(nsel::FileLock(dir_ / "fifo.lock", 0ms).held()) << "a FIFO is no lock";
  fs::create_directory(dir_ / "folder.lock");
  EXPECT_FALSE(nsel::FileLock(dir_ / "folder.lock", 0ms).held());
}

// Small files are read whatever is under their name: a FIFO without a writer, a device, a
// folder or a file over the cap is refused at once, with what it is, never read.
TEST_F(SpecialOutputs, ACappedReadRefusesWhatIsNotASmallRegularFile) {
  std::ofstream(dir_ / "small") << "{}\n";
  const nsel::SmallFile small = nsel::read_capped_file(dir_ / "small", 3);
  EXPECT_EQ(small.text, std::optional<std::string>("{}\n"));
  EXPECT_EQ(small.problem, "");
  EXPECT_EQ(nsel::read_capped_file(dir_ / "small", 2).problem, "is larger than 2 bytes (3)");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(nsel::read_capped_file(dir_ / "fifo", 100).problem,
            "is not a regular file (a named pipe)");
  fs::create_symlink("/dev/zero", dir_ / "zero");
  EXPECT_EQ(nsel::read_capped_file(dir_ / "zero", 100).problem,
            "is not a regular file (a character device)");
  EXPECT_EQ(nsel::read_capped_file(dir_, 100).problem, "is a folder");
  EXPECT_EQ(nsel::read_capped_file(dir_ / "absent", 100).problem,
            "cannot be read: No such file or directory");
  EXPECT_EQ(nsel::read_small_file(dir_ / "fifo"), std::nullopt);
}

// A stop signal (under a StopCleanup, as `nsel report` runs) at any moment of an atomic write
// leaves the old file or the new one, never the temporary: a forked child rewrites a 4 MiB page
// without pause and is sent SIGTERM at random moments.
TEST_F(SpecialOutputs, AStopSignalWhileAFileIsWrittenLeavesNoTemporary) {
  const std::string page(4 << 20, 'x');
  std::mt19937 random(::getpid());
  for (int round = 0; round < 20; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const nsel::StopCleanup stop_cleanup;
      for (;;) nsel::write_file_atomically(dir_ / "page.html", page);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + random() % 40));
    ASSERT_EQ(::kill(child, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "round " << round;
    EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      left.push_back(entry.path().filename().string());
    }
    EXPECT_TRUE(left.empty() || left == std::vector<std::string>{"page.html"})
        << "round " << round << ": " << left.size() << " files, first " << left.front();
    if (!left.empty()) {
      EXPECT_EQ(fs::file_size(dir_ / "page.html"), page.size());
    }
  }
}

TEST(PrivateTemporaryFile, IsNewEmptyAndOnlyTheUsers) {
  const auto first = nsel::create_private_temporary_file("nsel-files-test");
  const auto second = nsel::create_private_temporary_file("nsel-files-test");
  ASSERT_TRUE(first && second);
  EXPECT_NE(*first, *second);
  EXPECT_EQ(first->parent_path(), fs::temp_directory_path());
  EXPECT_TRUE(first->filename().string().starts_with("nsel-files-test."));
  EXPECT_EQ(fs::file_size(*first), 0u);
  EXPECT_EQ(fs::status(*first).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  fs::remove(*first);
  fs::remove(*second);
}

}  // namespace

// The one rule nsel exec and the manifest's recorder ask before nsys writes a report: a new file
// tried for real, its errno when refused, and nothing left behind.
TEST(NewFileRefusal, SaysWhatTheSystemSaysAndLeavesNothing) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("nsel-refusal-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "open");
  std::ofstream(dir / "file") << "x";
  EXPECT_EQ(nsel::new_file_refusal(dir / "open"), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir / "open"));
  EXPECT_EQ(nsel::new_file_refusal(dir / "missing"), ENOENT);
  EXPECT_EQ(nsel::new_file_refusal(dir / "file"), ENOTDIR);
  // /proc takes no new file, not even from root (whom permission bits do not stop).
  EXPECT_NE(nsel::new_file_refusal("/proc"), 0);
  std::filesystem::remove_all(dir);
}
