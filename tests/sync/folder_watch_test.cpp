// The watch a resident sync keeps on its source folders (real inotify): what it names, what it
// leaves to a subfolder's own watch, and when it says only a full pass is right.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sync/folder_watch.hpp"
#include "sync_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nsel::sync_detail::FolderChanges;
using nsel::sync_detail::FolderWatch;
using nsel::sync_detail::WatchedFolder;
using nsel::sync_test::append_file;
using nsel::sync_test::TempDir;
using nsel::sync_test::write_file;
using Clock = std::chrono::steady_clock;

class Watch : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    logs_ = temp_.path() / "logs";
    fs::create_directories(logs_ / "nsight");
  }

  static WatchedFolder folder(std::size_t root, const fs::path& source,
                              const std::string& relative) {
    return {root, source, "/dest/" + relative, relative};
  }

  // What changed, as "'<relative>': name name ..." lines.
  static std::vector<std::string> named(const FolderChanges& changes) {
    std::vector<std::string> lines;
    for (const FolderChanges::Folder& f : changes.folders) {
      std::string line = "'" + f.folder.relative + "':";
      for (const std::string& name : f.names) line += " " + name;
      lines.push_back(line);
    }
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  TempDir temp_;
  fs::path logs_;
};

}  // namespace

TEST_F(Watch, NewAndWrittenFilesAreNamedUnderTheirFolder) {
  write_file(logs_ / "raylet.out", "old");
  write_file(logs_ / "nsight" / "kept", "old");
  FolderWatch watch(std::nullopt);
  ASSERT_TRUE(watch.active()) << watch.why();
  ASSERT_TRUE(watch.add(folder(3, logs_, "")));
  ASSERT_TRUE(watch.add(folder(3, logs_ / "nsight", "nsight/")));
  EXPECT_EQ(named(watch.take()), std::vector<std::string>{}) << "nothing happened yet";

  append_file(logs_ / "raylet.out", "new");
  write_file(logs_ / "nsight" / "w_1.qdstrm", "capture");
  ::chmod((logs_ / "nsight" / "kept").c_str(), 0600);  // a time or mode change counts
  const FolderChanges changes = watch.take();
  EXPECT_FALSE(changes.lost);
  EXPECT_EQ(named(changes),
            (std::vector<std::string>{"'': raylet.out", "'nsight/': kept w_1.qdstrm"}));
  for (const FolderChanges::Folder& f : changes.folders) {
    EXPECT_EQ(f.folder.root, 3u);
    EXPECT_EQ(f.folder.source, f.folder.relative.empty() ? logs_ : logs_ / "nsight");
  }
  // Handed over once.
  EXPECT_EQ(named(watch.take()), std::vector<std::string>{});
}

TEST_F(Watch, ASubfolderIsNamedWhenItIsNewAndOtherwiseLeftToItsOwnWatch) {
  FolderWatch watch(std::nullopt);
  ASSERT_TRUE(watch.add(folder(0, logs_, "")));
  write_file(logs_ / "nsight" / "inside", "x");  // below: not the parent's to tell
  ::chmod((logs_ / "nsight").c_str(), 0750);     // the subfolder's own time or mode
  fs::create_directory(logs_ / "new-folder");    // new here: the pass must visit it
  fs::create_directories(temp_.path() / "moved-in");
  fs::rename(temp_.path() / "moved-in", logs_ / "moved-in");
  EXPECT_EQ(named(watch.take()), std::vector<std::string>{"'': moved-in new-folder"});
}

TEST_F(Watch, ARemovedMirroredFolderIsGoneAndASubfolderIsNot) {
  FolderWatch watch(std::nullopt);
  ASSERT_TRUE(watch.add(folder(5, logs_, "")));
  ASSERT_TRUE(watch.add(folder(5, logs_ / "nsight", "nsight/")));
  fs::remove_all(logs_);
  const FolderChanges changes = watch.take();
  EXPECT_EQ(changes.roots_gone, std::vector<std::size_t>{5});
  EXPECT_FALSE(changes.lost);
  EXPECT_TRUE(watch.active());
  EXPECT_EQ(watch.take().roots_gone, std::vector<std::size_t>{});
}

TEST_F(Watch, AMovedFolderMeansChangesMayHaveGoneUnseen) {
  FolderWatch watch(std::nullopt);
  ASSERT_TRUE(watch.add(folder(0, logs_, "")));
  ASSERT_TRUE(watch.add(folder(0, logs_ / "nsight", "nsight/")));
  fs::rename(logs_ / "nsight", logs_ / "renamed");
  EXPECT_TRUE(watch.take().lost);
  EXPECT_FALSE(watch.take().lost) << "said once";
}

TEST_F(Watch, AFolderThatIsGoneOrNotAFolderIsNoReasonToStop) {
  FolderWatch watch(std::nullopt);
  write_file(logs_ / "a-file", "x");
  EXPECT_TRUE(watch.add(folder(0, logs_ / "missing", "missing/")));
  EXPECT_TRUE(watch.add(folder(0, logs_ / "a-file", "a-file/")));
  EXPECT_TRUE(watch.active());
  EXPECT_EQ(watch.why(), "");
}

TEST_F(Watch, MoreFoldersThanTheLimitStopsWatchingForGood) {
  fs::create_directories(logs_ / "third");
  FolderWatch watch(std::size_t{2});
  ASSERT_TRUE(watch.add(folder(0, logs_, "")));
  ASSERT_TRUE(watch.add(folder(0, logs_, ""))) << "the same folder again takes no new watch";
  ASSERT_TRUE(watch.add(folder(0, logs_ / "nsight", "nsight/")));
  EXPECT_FALSE(watch.add(folder(0, logs_ / "third", "third/")));
  EXPECT_FALSE(watch.active());
  EXPECT_EQ(watch.why(), "more than 2 folders to watch (the watch limit)");
  // Once stopped, no folder is watched again and nothing more is told.
  EXPECT_FALSE(watch.add(folder(0, logs_ / "third", "third/")));
  watch.take();
  write_file(logs_ / "late", "x");
  EXPECT_EQ(named(watch.take()), std::vector<std::string>{});
  EXPECT_EQ(watch.why(), "more than 2 folders to watch (the watch limit)");
}

// More events than the kernel queues (fs.inotify.max_queued_events) before anyone reads them.
TEST_F(Watch, AnOverflowingQueueSaysChangesWereLost) {
  long queued = 16384;
  if (std::ifstream limit("/proc/sys/fs/inotify/max_queued_events"); limit) limit >> queued;
  if (queued > 100000) {
    GTEST_SKIP() << "the kernel queues " << queued << " events: too many to fill in a unit test";
  }
  FolderWatch watch(std::nullopt);
  ASSERT_TRUE(watch.add(folder(0, logs_, "")));
  // Each new file is two events (created, closed after writing).
  for (long i = 0; i < queued / 2 + 100; ++i) {
    const int fd = ::open((logs_ / ("f" + std::to_string(i))).c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ::close(fd);
  }
  EXPECT_TRUE(watch.take().lost);
  write_file(logs_ / "after", "x");
  const FolderChanges next = watch.take();
  EXPECT_FALSE(next.lost);
  EXPECT_EQ(named(next), std::vector<std::string>{"'': after"});
}

TEST_F(Watch, WaitingGathersEventsAndReturnsAtTheDeadline) {
  FolderWatch watch(std::nullopt);
  ASSERT_TRUE(watch.add(folder(0, logs_, "")));
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    write_file(logs_ / "during", "x");
  });
  const auto began = Clock::now();
  watch.wait_until(began + std::chrono::milliseconds(200));
  const auto waited = Clock::now() - began;
  writer.join();
  EXPECT_GE(waited, std::chrono::milliseconds(200));
  EXPECT_LT(waited, std::chrono::milliseconds(2000));
  EXPECT_EQ(named(watch.take()), std::vector<std::string>{"'': during"});
  // A deadline already past returns at once.
  const auto again = Clock::now();
  watch.wait_until(again - std::chrono::seconds(1));
  EXPECT_LT(Clock::now() - again, std::chrono::milliseconds(50));
}

TEST_F(Watch, AStoppedWatchStillWaitsUntilTheDeadline) {
  FolderWatch watch(std::size_t{0});
  EXPECT_FALSE(watch.add(folder(0, logs_, "")));
  EXPECT_FALSE(watch.active());
  const auto began = Clock::now();
  watch.wait_until(began + std::chrono::milliseconds(100));
  EXPECT_GE(Clock::now() - began, std::chrono::milliseconds(100));
}
