// One pass of the mirror on real files: what it copies and where, that it copies only what
// changed, that no half-written file is ever visible under its final name, and what each fault
// (a denied folder, a full disk, a file in place of a folder) does to the pass.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "nsel/sync/mirror.hpp"
#include "sync/state.hpp"
#include "sync_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nsel::PassStats;
using nsel::sync_test::append_file;
using nsel::sync_test::describe;
using nsel::sync_test::lstat_of;
using nsel::sync_test::pattern_bytes;
using nsel::sync_test::read_file;
using nsel::sync_test::set_mtime;
using nsel::sync_test::TempDir;
using nsel::sync_test::tree;
using nsel::sync_test::write_file;

constexpr const char* kSession = "session_2026-01-02_03-04-05_000000_7";
constexpr const char* kReport = "w_1:3_42.nsys-rep";

class MirrorPass : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    source_ = temp_.path() / "ray";
    logs_ = source_ / kSession / "logs";
    dest_ = temp_.path() / "dest";
    mirrored_ = dest_ / "ray" / kSession / "logs";
    fs::create_directories(logs_ / "nsight");
  }

  PassStats pass(std::vector<std::string>* problems = nullptr) {
    return nsel::sync_test::pass_once(source_, dest_, problems);
  }

  // A pass whose problems must be none.
  PassStats clean_pass() {
    std::vector<std::string> problems;
    const PassStats stats = pass(&problems);
    EXPECT_EQ(problems, std::vector<std::string>{});
    return stats;
  }

  std::string partial_of(const std::string& name) const {
    return "." + name + std::string(nsel::kPartialSuffix);
  }

  TempDir temp_;
  fs::path source_, logs_, dest_, mirrored_;
};

}  // namespace

TEST_F(MirrorPass, CopiesEveryFileWithItsBytesModeAndTime) {
  const std::string report = pattern_bytes(300000, 1);  // NULs and high bytes
  write_file(logs_ / "nsight" / kReport, report);
  write_file(logs_ / "raylet.out", "started\n");
  ::chmod((logs_ / "raylet.out").c_str(), 0640);
  set_mtime(logs_ / "nsight" / kReport, 1700000000, 123456789);

  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.sessions, 1u);
  EXPECT_EQ(stats.folders, 2u);
  EXPECT_EQ(stats.files, 2u);
  EXPECT_EQ(stats.copied, 2u);
  EXPECT_EQ(stats.bytes_copied, report.size() + 8);
  EXPECT_EQ(stats.failed, 0u);
  EXPECT_FALSE(stats.saw_ended);
  EXPECT_EQ(read_file(mirrored_ / "nsight" / kReport), report);
  EXPECT_EQ(read_file(mirrored_ / "raylet.out"), "started\n");
  EXPECT_EQ(lstat_of(mirrored_ / "raylet.out").st_mode & 07777, 0640u);
  const struct stat copy = lstat_of(mirrored_ / "nsight" / kReport);
  EXPECT_EQ(copy.st_mtim.tv_sec, 1700000000);
  EXPECT_EQ(copy.st_mtim.tv_nsec, 123456789);
  // Nothing else: no temporary name left behind, only the state beside the copies.
  EXPECT_EQ(tree(dest_),
            (std::vector<std::string>{"ray", "ray/" + std::string(kSession),
                                      "ray/" + std::string(kSession) + "/logs",
                                      "ray/" + std::string(kSession) + "/logs/.nsel-sync",
                                      "ray/" + std::string(kSession) + "/logs/.nsel-sync/state",
                                      "ray/" + std::string(kSession) + "/logs/nsight",
                                      "ray/" + std::string(kSession) + "/logs/nsight/" + kReport,
                                      "ray/" + std::string(kSession) + "/logs/raylet.out"}));
}

TEST_F(MirrorPass, ASecondPassOverUnchangedFilesCopiesNothing) {
  write_file(logs_ / "nsight" / kReport, "the report");
  write_file(logs_ / "raylet.out", "log");
  clean_pass();
  const ino_t report_inode = lstat_of(mirrored_ / "nsight" / kReport).st_ino;
  const PassStats again = clean_pass();
  EXPECT_EQ(again.files, 2u);
  EXPECT_EQ(again.copied, 0u);
  EXPECT_EQ(again.bytes_copied, 0u);
  EXPECT_EQ(lstat_of(mirrored_ / "nsight" / kReport).st_ino, report_inode);
}

TEST_F(MirrorPass, AGrownFileIsCopiedAgainAndTheOthersAreLeftAlone) {
  write_file(logs_ / "raylet.out", "line 1\n");
  write_file(logs_ / "nsight" / kReport, "the report");
  clean_pass();
  const ino_t report_inode = lstat_of(mirrored_ / "nsight" / kReport).st_ino;
  append_file(logs_ / "raylet.out", "line 2\n");
  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.copied, 1u);
  EXPECT_EQ(stats.bytes_copied, 14u);
  EXPECT_EQ(read_file(mirrored_ / "raylet.out"), "line 1\nline 2\n");
  EXPECT_EQ(lstat_of(mirrored_ / "nsight" / kReport).st_ino, report_inode);
}

TEST_F(MirrorPass, AReplacedOrShrunkFileIsCopiedAgain) {
  write_file(logs_ / "a.log", "first version");
  write_file(logs_ / "b.log", "a long first version");
  set_mtime(logs_ / "a.log", 1700000000);
  clean_pass();
  // Replaced by a rename, with the same size: only its time tells.
  write_file(logs_ / ".a.new", "other version");
  set_mtime(logs_ / ".a.new", 1700000100);
  fs::rename(logs_ / ".a.new", logs_ / "a.log");
  // Truncated in place: the copy must shrink too, never keep the old tail.
  write_file(logs_ / "b.log", "short");
  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.copied, 2u);
  EXPECT_EQ(read_file(mirrored_ / "a.log"), "other version");
  EXPECT_EQ(read_file(mirrored_ / "b.log"), "short");
}

TEST_F(MirrorPass, FilesGoneFromTheSourceStayAtTheDestination) {
  write_file(logs_ / "nsight" / kReport, "the report");
  clean_pass();
  fs::remove_all(logs_ / "nsight");
  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.copied, 0u);
  EXPECT_EQ(read_file(mirrored_ / "nsight" / kReport), "the report");
}

// The folder's time tells the next pass that its copies changed: a removed copy is made again.
TEST_F(MirrorPass, ACopyRemovedAtTheDestinationIsCopiedAgain) {
  write_file(logs_ / "nsight" / kReport, "the report");
  write_file(logs_ / "nsight" / "other.log", "other");
  clean_pass();
  // Past the kernel's coarse clock tick, so that the folder's time surely moves.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  fs::remove(mirrored_ / "nsight" / kReport);
  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.copied, 1u);
  EXPECT_EQ(read_file(mirrored_ / "nsight" / kReport), "the report");
}

TEST_F(MirrorPass, ADestinationRemovedBetweenPassesIsMadeAgainInFull) {
  write_file(logs_ / "nsight" / kReport, "the report");
  write_file(logs_ / "raylet.out", "log");
  clean_pass();
  fs::remove_all(dest_);
  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.copied, 2u);
  EXPECT_EQ(read_file(mirrored_ / "nsight" / kReport), "the report");
  EXPECT_EQ(read_file(mirrored_ / "raylet.out"), "log");
}

TEST_F(MirrorPass, AMissingDestinationIsMadeWithItsParents) {
  write_file(logs_ / "raylet.out", "log");
  const fs::path deep = temp_.path() / "not" / "yet" / "there";
  std::vector<std::string> problems;
  const PassStats stats = nsel::sync_test::pass_once(source_, deep, &problems);
  EXPECT_EQ(problems, std::vector<std::string>{});
  EXPECT_EQ(stats.copied, 1u);
  EXPECT_EQ(read_file(deep / "ray" / kSession / "logs" / "raylet.out"), "log");
}

TEST_F(MirrorPass, ADestinationThatCannotBeMadeIsNamedAndNothingElseHappens) {
  write_file(logs_ / "raylet.out", "log");
  write_file(dest_, "LOG_DIR is a file");
  std::vector<std::string> problems;
  const PassStats stats = pass(&problems);
  EXPECT_EQ(describe(stats, problems),
            "sessions=0 files=0 copied=0 bytes=0 failed=1\nproblem: cannot create " +
                mirrored_.string() + ": Not a directory\n");
  EXPECT_EQ(read_file(dest_), "LOG_DIR is a file");
}

TEST_F(MirrorPass, AFileInPlaceOfADestinationFolderIsNamedAndLeftAlone) {
  write_file(logs_ / "nsight" / kReport, "the report");
  write_file(logs_ / "raylet.out", "log");
  write_file(mirrored_ / "nsight", "someone's file");
  std::vector<std::string> problems;
  const PassStats stats = pass(&problems);
  EXPECT_EQ(describe(stats, problems),
            "sessions=1 files=1 copied=1 bytes=3 failed=1\nproblem: cannot copy into " +
                (mirrored_ / "nsight").string() +
                ": not a folder (a link or a file is in its place; links are never followed at "
                "the destination)\n");
  EXPECT_EQ(read_file(mirrored_ / "nsight"), "someone's file");
  EXPECT_EQ(read_file(mirrored_ / "raylet.out"), "log");
}

// nsys writes <name>.qdstrm while the program runs, then imports it into <name>.nsys-rep and
// removes it. Each pass copies what is there; the copy is always whole as of its start, the next
// pass completes it, and nothing already copied is removed.
TEST_F(MirrorPass, AReportStillBeingWrittenIsCopiedAsFarAsItGoesThenCompleted) {
  const fs::path qdstrm = logs_ / "nsight" / "w_1:3_42.qdstrm";
  const int fd = ::open(qdstrm.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const std::string first = pattern_bytes(70000, 2), second = pattern_bytes(50000, 3);
  ASSERT_EQ(::write(fd, first.data(), first.size()), static_cast<ssize_t>(first.size()));
  clean_pass();
  EXPECT_EQ(read_file(mirrored_ / "nsight" / "w_1:3_42.qdstrm"), first);

  ASSERT_EQ(::write(fd, second.data(), second.size()), static_cast<ssize_t>(second.size()));
  const PassStats grown = clean_pass();  // still open for writing
  EXPECT_EQ(grown.copied, 1u);
  EXPECT_EQ(read_file(mirrored_ / "nsight" / "w_1:3_42.qdstrm"), first + second);
  ::close(fd);

  write_file(logs_ / "nsight" / kReport, "imported");
  fs::remove(qdstrm);
  const PassStats imported = clean_pass();
  EXPECT_EQ(imported.copied, 1u);
  EXPECT_EQ(read_file(mirrored_ / "nsight" / kReport), "imported");
  EXPECT_EQ(read_file(mirrored_ / "nsight" / "w_1:3_42.qdstrm"), first + second);
}

// A real writer process appends while passes run: every copy is a prefix of what it writes (never
// a hole or a mix), and the pass after it ends has every byte.
TEST_F(MirrorPass, ACopyTakenWhileAProcessAppendsIsAlwaysAPrefixAndTheLastIsExact) {
  constexpr std::size_t kChunk = 4096, kChunks = 600;
  const std::string all = pattern_bytes(kChunk * kChunks, 4);
  const fs::path log = logs_ / "worker.out";
  write_file(log, "");
  const pid_t writer = ::fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
    for (std::size_t i = 0; fd >= 0 && i < kChunks; ++i) {
      if (::write(fd, all.data() + i * kChunk, kChunk) != static_cast<ssize_t>(kChunk)) _exit(1);
      ::usleep(500);
    }
    _exit(fd >= 0 ? 0 : 1);
  }
  int passes = 0;
  for (int status = 0; ::waitpid(writer, &status, WNOHANG) == 0; ++passes) {
    clean_pass();
    const auto copy = read_file(mirrored_ / "worker.out");
    ASSERT_TRUE(copy.has_value());
    ASSERT_LE(copy->size(), all.size());
    ASSERT_EQ(*copy, all.substr(0, copy->size())) << "pass " << passes;
  }
  clean_pass();
  EXPECT_EQ(read_file(mirrored_ / "worker.out"), all);
  EXPECT_GT(passes, 0);
  EXPECT_EQ(clean_pass().copied, 0u);
}

// What the kernel reports on the destination folder during a pass: the final name only ever
// appears by a rename of a complete temporary file, never by being created or written.
TEST_F(MirrorPass, NoHalfWrittenFileIsEverVisibleUnderItsFinalName) {
  write_file(logs_ / "nsight" / kReport, pattern_bytes(24u << 20, 5));
  fs::create_directories(mirrored_ / "nsight");
  write_file(mirrored_ / "nsight" / kReport, "an older copy");  // replaced, never rewritten
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, (mirrored_ / "nsight").c_str(),
                                IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM |
                                    IN_MOVED_TO | IN_DELETE | IN_OPEN | IN_ATTRIB),
            0);
  clean_pass();
  std::vector<std::string> on_final, on_partial;
  alignas(inotify_event) char buffer[1 << 16];
  for (ssize_t n; (n = ::read(watch, buffer, sizeof buffer)) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      const std::string name = event->len > 0 ? event->name : "";
      const std::string what = (event->mask & IN_CREATE)        ? "create"
                               : (event->mask & IN_MOVED_FROM)  ? "moved-from"
                               : (event->mask & IN_MOVED_TO)    ? "moved-to"
                               : (event->mask & IN_DELETE)      ? "delete"
                               : (event->mask & IN_CLOSE_WRITE) ? "close-write"
                               : (event->mask & IN_OPEN)        ? "open"
                               : (event->mask & IN_ATTRIB)      ? "attrib"
                                                                : "modify";
      if (name == kReport) on_final.push_back(what);
      if (name == partial_of(kReport) && (on_partial.empty() || on_partial.back() != what)) {
        on_partial.push_back(what);
      }
    }
  }
  ::close(watch);
  EXPECT_EQ(on_final, std::vector<std::string>{"moved-to"});
  ASSERT_FALSE(on_partial.empty()) << "the copy was not written under a temporary name";
  EXPECT_EQ(on_partial.front(), "create");
  EXPECT_EQ(on_partial.back(), "moved-from");
  EXPECT_EQ(read_file(mirrored_ / "nsight" / kReport), pattern_bytes(24u << 20, 5));
}

TEST_F(MirrorPass, ALeftOverTemporaryFileOfAKilledPassIsReplacedByTheCopy) {
  write_file(logs_ / "nsight" / kReport, "the report");
  write_file(mirrored_ / "nsight" / partial_of(kReport), "half of an old cop");
  clean_pass();
  EXPECT_EQ(read_file(mirrored_ / "nsight" / kReport), "the report");
  EXPECT_FALSE(fs::exists(mirrored_ / "nsight" / partial_of(kReport)));
}

// When the source is itself a mirror, a copy in progress there is not a file to copy.
TEST_F(MirrorPass, ACopyInProgressAtTheSourceIsNeverCopied) {
  write_file(logs_ / "nsight" / partial_of(kReport), "half");
  write_file(logs_ / "nsight" / kReport, "whole");
  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.files, 1u);
  EXPECT_EQ(tree(mirrored_ / "nsight"), std::vector<std::string>{kReport});
}

TEST_F(MirrorPass, LinksAreCopiedAsLinksAndNeverFollowed) {
  write_file(logs_ / "nsight" / kReport, "the report");
  write_file(temp_.path() / "outside", pattern_bytes(1 << 20, 6));
  fs::create_symlink("nsight/" + std::string(kReport), logs_ / "latest");
  fs::create_symlink(temp_.path() / "outside", logs_ / "big");
  fs::create_symlink("nowhere", logs_ / "dangling");
  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.files, 4u);
  EXPECT_EQ(stats.copied, 4u);
  EXPECT_EQ(stats.bytes_copied, 10u);  // the report alone: links carry no bytes
  EXPECT_EQ(fs::read_symlink(mirrored_ / "latest"), "nsight/" + std::string(kReport));
  EXPECT_EQ(fs::read_symlink(mirrored_ / "big"), temp_.path() / "outside");
  EXPECT_EQ(fs::read_symlink(mirrored_ / "dangling"), "nowhere");

  EXPECT_EQ(clean_pass().copied, 0u);
  fs::remove(logs_ / "latest");
  fs::create_symlink("raylet.out", logs_ / "latest");
  EXPECT_EQ(clean_pass().copied, 1u);
  EXPECT_EQ(fs::read_symlink(mirrored_ / "latest"), "raylet.out");
}

// A copy's temporary name is longer than its own: a name as long as the file system allows
// still gets a temporary name that fits.
TEST_F(MirrorPass, ANameAsLongAsTheFileSystemAllowsIsCopied) {
  const long name_max = ::pathconf(logs_.c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 20);
  const std::string longest =
      std::string(static_cast<std::size_t>(name_max) - 9, 'n') + ".nsys-rep";
  write_file(logs_ / "nsight" / longest, "long");
  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.copied, 1u);
  EXPECT_EQ(read_file(mirrored_ / "nsight" / longest), "long");
  EXPECT_EQ(tree(mirrored_ / "nsight"), std::vector<std::string>{longest});
  EXPECT_EQ(clean_pass().copied, 0u);
}

// A name with a newline cannot be a line of the state: it is compared at the destination on
// every pass instead, and copied only when it changes.
TEST_F(MirrorPass, AFileNamedWithANewlineIsCopiedOnceAndKeptOutOfTheState) {
  const std::string name = "two\nlines";
  write_file(logs_ / name, "x");
  EXPECT_EQ(clean_pass().copied, 1u);
  EXPECT_EQ(read_file(mirrored_ / name), "x");
  EXPECT_EQ(clean_pass().copied, 0u);
  const auto state = read_file(mirrored_ / nsel::sync_detail::SyncState::kFileName);
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->find("lines"), std::string::npos) << *state;
  append_file(logs_ / name, "y");
  EXPECT_EQ(clean_pass().copied, 1u);
  EXPECT_EQ(read_file(mirrored_ / name), "xy");
}

// A folder's name goes into the state as the start of each of its files' paths: one with a
// newline must not turn into an entry that says another file is copied when it is not.
TEST_F(MirrorPass, AFolderNamedWithANewlineCannotHideAnotherFileFromTheNextPass) {
  write_file(logs_ / "x\ny" / "f", "inner");
  set_mtime(logs_ / "x\ny" / "f", 1700000000, 5);
  clean_pass();
  // A file whose name is the folder's first line, with the inner file's size and time (a copy
  // made with cp -p, say).
  write_file(logs_ / "x", "outer");
  set_mtime(logs_ / "x", 1700000000, 5);
  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.copied, 1u);
  EXPECT_EQ(read_file(mirrored_ / "x"), "outer");
}

TEST_F(MirrorPass, ACorruptStateOnlyCostsTimeAndIsWrittenAnew) {
  write_file(logs_ / "nsight" / kReport, "the report");
  write_file(logs_ / "raylet.out", "log");
  clean_pass();
  const fs::path state = mirrored_ / nsel::sync_detail::SyncState::kFileName;
  write_file(state, std::string("nsel-sync-state 1\nF 1 2 \x00\xff garbage", 31));
  const PassStats stats = clean_pass();
  EXPECT_EQ(stats.files, 2u);
  EXPECT_EQ(stats.copied, 0u);  // the copies themselves were checked: all current
  const auto rewritten = read_file(state);
  ASSERT_TRUE(rewritten.has_value());
  EXPECT_TRUE(rewritten->starts_with("nsel-sync-state 1\n")) << *rewritten;
  EXPECT_NE(rewritten->find(" raylet.out\n"), std::string::npos) << *rewritten;
  EXPECT_NE(rewritten->find(" nsight/" + std::string(kReport) + "\n"), std::string::npos)
      << *rewritten;
  EXPECT_EQ(rewritten->find("garbage"), std::string::npos) << *rewritten;
}

TEST_F(MirrorPass, OnlyRaySessionFoldersAreMirroredEachInItsPlace) {
  const std::string second = "session_2026-01-02_04-00-00_000000_8";
  write_file(logs_ / "raylet.out", "first");
  write_file(source_ / second / "logs" / "raylet.out", "second");
  fs::create_directory_symlink(source_ / kSession, source_ / "session_latest");
  write_file(source_ / "session_nodigit" / "logs" / "x", "not a session");
  write_file(source_ / "session_2026-01-02_05-00-00_000000_9" / "no-logs-here", "none");
  write_file(source_ / "session_2026-01-02_06-00-00_000000_10", "a file, not a folder");
  write_file(source_ / "logs" / "x", "not in a session");

  const PassStats head = clean_pass();
  EXPECT_EQ(head.sessions, 2u);
  EXPECT_EQ(
      tree(dest_ / "ray"),
      (std::vector<std::string>{
          kSession, std::string(kSession) + "/logs", std::string(kSession) + "/logs/.nsel-sync",
          std::string(kSession) + "/logs/.nsel-sync/state", std::string(kSession) + "/logs/nsight",
          std::string(kSession) + "/logs/raylet.out", second, second + "/logs",
          second + "/logs/.nsel-sync", second + "/logs/.nsel-sync/state",
          second + "/logs/raylet.out"}));

  // Another node's copies go below a folder of its own, beside the head's.
  std::vector<std::string> problems;
  const PassStats node = nsel::sync_test::pass_once(source_, dest_, &problems, "10.0.0.2");
  EXPECT_EQ(problems, std::vector<std::string>{});
  EXPECT_EQ(node.sessions, 2u);
  EXPECT_EQ(read_file(dest_ / "ray" / "10.0.0.2" / kSession / "logs" / "raylet.out"), "first");
  EXPECT_EQ(read_file(dest_ / "ray" / "10.0.0.2" / second / "logs" / "raylet.out"), "second");
}

TEST_F(MirrorPass, ASourceWithoutSessionsIsAnEmptyPass) {
  fs::remove_all(source_);
  const PassStats missing = clean_pass();
  EXPECT_EQ(describe(missing, {}), "sessions=0 files=0 copied=0 bytes=0 failed=0\n");
  EXPECT_FALSE(fs::exists(dest_));
}

TEST_F(MirrorPass, EndedIsWhatThePassSawAsItBegan) {
  write_file(logs_ / "raylet.out", "log");
  EXPECT_FALSE(clean_pass().saw_ended);
  write_file(dest_ / nsel::kEndedFile, "");
  const PassStats last = clean_pass();
  EXPECT_TRUE(last.saw_ended);
  EXPECT_EQ(last.number, 1u);
  EXPECT_TRUE(last.full);
}

TEST_F(MirrorPass, TheObserverIsToldTheFinalNumbersOnce) {
  write_file(logs_ / "raylet.out", "log");
  nsel::SyncSettings settings;
  settings.source = source_;
  settings.log_dir = dest_;
  std::vector<std::pair<PassStats, bool>> told;
  nsel::SyncObserver observer;
  observer.progress = [&told](const PassStats& stats, bool final) {
    told.emplace_back(stats, final);
  };
  const PassStats stats = nsel::sync_pass(settings, observer);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_TRUE(told[0].second);
  EXPECT_EQ(describe(told[0].first, {}), describe(stats, {}));
  EXPECT_EQ(told[0].first.copied, 1u);
}

// ---- faults that need another user or a mount of their own (in a forked child) --------------

// As root, permission bits stop nothing: the pass runs as nobody (65534), owner of the tree.
TEST_F(MirrorPass, AReadOnlyDestinationFolderIsNamedAndTheRestIsCopied) {
  write_file(logs_ / "nsight" / kReport, "the report");
  write_file(logs_ / "raylet.out", "log");
  fs::create_directories(mirrored_ / "nsight");
  nsel::sync_test::give_to_nobody(temp_.path());
  ASSERT_EQ(::chmod((mirrored_ / "nsight").c_str(), 0555), 0);
  const auto result = nsel::sync_test::in_child(nsel::sync_test::become_nobody, [&] {
    std::vector<std::string> problems;
    const PassStats stats = pass(&problems);
    return describe(stats, problems);
  });
  if (const std::string why = nsel::sync_test::setup_failure(result); !why.empty()) {
    GTEST_SKIP() << why;
  }
  ASSERT_EQ(result.exit_code, 0) << result.text;
  EXPECT_EQ(result.text, "sessions=1 files=2 copied=1 bytes=3 failed=1\nproblem: cannot write " +
                             (mirrored_ / "nsight" / partial_of(kReport)).string() +
                             ": Permission denied\n");
  EXPECT_EQ(read_file(mirrored_ / "raylet.out"), "log");
  EXPECT_EQ(tree(mirrored_ / "nsight"), std::vector<std::string>{});
}

TEST_F(MirrorPass, AnUnreadableSourceFileIsNamedAndTheRestIsCopied) {
  write_file(logs_ / "nsight" / kReport, "the report");
  write_file(logs_ / "raylet.out", "log");
  nsel::sync_test::give_to_nobody(temp_.path());
  ASSERT_EQ(::chmod((logs_ / "nsight" / kReport).c_str(), 0), 0);
  const auto result = nsel::sync_test::in_child(nsel::sync_test::become_nobody, [&] {
    std::vector<std::string> problems;
    const PassStats stats = pass(&problems);
    return describe(stats, problems);
  });
  if (const std::string why = nsel::sync_test::setup_failure(result); !why.empty()) {
    GTEST_SKIP() << why;
  }
  ASSERT_EQ(result.exit_code, 0) << result.text;
  EXPECT_EQ(result.text, "sessions=1 files=2 copied=1 bytes=3 failed=1\nproblem: cannot read " +
                             (logs_ / "nsight" / kReport).string() + ": Permission denied\n");
  EXPECT_EQ(read_file(mirrored_ / "raylet.out"), "log");
  EXPECT_FALSE(fs::exists(mirrored_ / "nsight" / partial_of(kReport)));
}

TEST_F(MirrorPass, ADestinationThatCannotBeMadeForLackOfPermissionIsNamed) {
  write_file(logs_ / "raylet.out", "log");
  fs::create_directories(dest_);
  nsel::sync_test::give_to_nobody(temp_.path());
  ASSERT_EQ(::chmod(dest_.c_str(), 0555), 0);
  const auto result = nsel::sync_test::in_child(nsel::sync_test::become_nobody, [&] {
    std::vector<std::string> problems;
    const PassStats stats = pass(&problems);
    return describe(stats, problems);
  });
  if (const std::string why = nsel::sync_test::setup_failure(result); !why.empty()) {
    GTEST_SKIP() << why;
  }
  ASSERT_EQ(result.exit_code, 0) << result.text;
  EXPECT_EQ(result.text, "sessions=0 files=0 copied=0 bytes=0 failed=1\nproblem: cannot create " +
                             mirrored_.string() + ": Permission denied\n");
  EXPECT_EQ(tree(dest_), std::vector<std::string>{});
}

// A 64 KiB tmpfs as LOG_DIR: a report that no longer fits fails with its reason, and the last
// complete copy stays whole under its name, with no temporary file left taking the space.
TEST_F(MirrorPass, AFullDestinationKeepsTheLastWholeCopyAndLeavesNoTemporaryFile) {
  const std::string small = pattern_bytes(16 << 10, 7), big = pattern_bytes(200 << 10, 8);
  write_file(logs_ / "nsight" / kReport, small);
  fs::create_directories(dest_);
  const auto result = nsel::sync_test::in_child(nsel::sync_test::small_tmpfs(dest_, "64k"), [&] {
    std::vector<std::string> problems;
    std::string text = describe(pass(&problems), problems);
    write_file(logs_ / "nsight" / kReport, big);
    problems.clear();
    // The bytes counted before the disk filled up vary: only the outcome is compared.
    const PassStats full = pass(&problems);
    text +=
        "copied=" + std::to_string(full.copied) + " failed=" + std::to_string(full.failed) + "\n";
    for (const std::string& problem : problems) text += "problem: " + problem + "\n";
    const auto copy = read_file(mirrored_ / "nsight" / kReport);
    text += copy == small ? "old copy whole\n" : "old copy changed\n";
    for (const std::string& name : tree(mirrored_ / "nsight")) text += "left: " + name + "\n";
    // Space again: the next pass completes the copy.
    write_file(logs_ / "nsight" / kReport, small + "!");
    problems.clear();
    text += describe(pass(&problems), problems);
    text += read_file(mirrored_ / "nsight" / kReport) == small + "!" ? "new copy whole\n"
                                                                     : "new copy wrong\n";
    return text;
  });
  if (const std::string why = nsel::sync_test::setup_failure(result); !why.empty()) {
    GTEST_SKIP() << why;
  }
  ASSERT_EQ(result.exit_code, 0) << result.text;
  EXPECT_EQ(result.text,
            "sessions=1 files=1 copied=1 bytes=16384 failed=0\n"
            "copied=0 failed=1\nproblem: cannot copy " +
                (logs_ / "nsight" / kReport).string() +
                ": No space left on device\n"
                "old copy whole\n"
                "left: " +
                std::string(kReport) +
                "\n"
                "sessions=1 files=1 copied=1 bytes=16385 failed=0\n"
                "new copy whole\n");
}

// A copy is owned by whoever runs the sync: a set-user-ID or set-group-ID bit of the source
// must not make it a program that runs as that user (root, in many containers).
TEST_F(MirrorPass, ACopyNeverCarriesSetUserOrGroupIdBits) {
  write_file(logs_ / "tool", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((logs_ / "tool").c_str(), 06755), 0);
  clean_pass();
  EXPECT_EQ(lstat_of(mirrored_ / "tool").st_mode & 07777, 0755u);
}

// Two syncs into one destination at once (an --every loop and a final sync, or two nodes under
// one name) take turns per folder: neither ever shows a half-written file under a real name, and
// neither fails. (Without turns both wrote the same temporary name: one renamed the other's
// half-written copy into place, and the other's rename failed with "No such file or directory".)
TEST_F(MirrorPass, TwoSyncsIntoOneDestinationAtOnceNeverShowAHalfWrittenFile) {
  constexpr std::size_t kSize = 48u << 20;
  std::vector<std::string> problems_seen;
  std::vector<std::uintmax_t> sizes_seen;
  for (unsigned round = 0; round < 4; ++round) {
    write_file(logs_ / "nsight" / kReport, pattern_bytes(kSize, 20 + round));
    std::atomic<int> ready{0};
    std::atomic<bool> copying{true};
    std::vector<std::string> problems[2];
    const auto one_sync = [&](int which) {
      ++ready;
      while (ready.load() < 2) std::this_thread::yield();
      pass(&problems[which]);
    };
    // What a reader of the destination sees under the real name, as often as it can look.
    std::thread reader([&] {
      while (copying.load()) {
        struct stat there {};
        if (::stat((mirrored_ / "nsight" / kReport).c_str(), &there) == 0 &&
            static_cast<std::uintmax_t>(there.st_size) != kSize) {
          sizes_seen.push_back(static_cast<std::uintmax_t>(there.st_size));
        }
      }
    });
    std::thread first(one_sync, 0), second(one_sync, 1);
    first.join();
    second.join();
    copying = false;
    reader.join();
    for (const auto& list : problems) {
      problems_seen.insert(problems_seen.end(), list.begin(), list.end());
    }
    EXPECT_EQ(read_file(mirrored_ / "nsight" / kReport), pattern_bytes(kSize, 20 + round));
  }
  EXPECT_EQ(problems_seen, std::vector<std::string>{});
  EXPECT_EQ(sizes_seen, std::vector<std::uintmax_t>{}) << "a half-written file had the real name";
  EXPECT_EQ(tree(mirrored_ / "nsight"), std::vector<std::string>{kReport});
}
