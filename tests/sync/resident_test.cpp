// The resident sync (--every): passes until the one that began with LOG_DIR/ENDED, watching the
// source between passes so that later passes look only at what changed, and falling back to full
// passes where watching cannot be trusted. The test acts between passes from the observer, which
// the loop calls on its own thread after each pass, so that each pass sees exactly what was done.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "nsel/sync/mirror.hpp"
#include "sync_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nsel::PassStats;
using nsel::sync_test::append_file;
using nsel::sync_test::read_file;
using nsel::sync_test::TempDir;
using nsel::sync_test::write_file;

constexpr const char* kSession = "session_2026-01-02_03-04-05_000000_7";

// One pass as "<number> full|watched files=N copied=N folders=N sessions=N [ended]".
std::string line_of(const PassStats& s) {
  return std::to_string(s.number) + (s.full ? " full" : " watched") +
         " files=" + std::to_string(s.files) + " copied=" + std::to_string(s.copied) +
         " folders=" + std::to_string(s.folders) + " sessions=" + std::to_string(s.sessions) +
         (s.saw_ended ? " ended" : "") +
         (s.failed > 0 ? " failed=" + std::to_string(s.failed) : "");
}

class Resident : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    source_ = temp_.path() / "ray";
    logs_ = source_ / kSession / "logs";
    dest_ = temp_.path() / "dest";
    mirrored_ = dest_ / "ray" / kSession / "logs";
    write_file(logs_ / "raylet.out", "a");
    write_file(logs_ / "nsight" / "w_1.nsys-rep", "report");
    settings_.source = source_;
    settings_.log_dir = dest_;
    settings_.every = std::chrono::milliseconds(10);
  }

  // Runs the loop; `between(n)` runs after pass n (the loop's next wait follows). Past
  // `kMostPasses` ENDED is made, so a loop that never stops on its own still ends.
  std::vector<std::string> run(const std::function<void(std::uint64_t)>& between) {
    static constexpr std::uint64_t kMostPasses = 20;
    std::vector<std::string> passes;
    nsel::SyncObserver observer;
    observer.progress = [&](const PassStats& stats, bool final) {
      if (!final) return;
      passes.push_back(line_of(stats));
      if (stats.saw_ended) return;
      last_elapsed_ = stats.elapsed;
      between(stats.number);
      if (stats.number >= kMostPasses) end();
    };
    observer.notice = [this](const std::string& message) { notices_.push_back(message); };
    observer.problem = [this](const std::string& message) { problems_.push_back(message); };
    const PassStats last = nsel::sync_loop(settings_, observer);
    EXPECT_FALSE(passes.empty());
    if (!passes.empty()) {
      EXPECT_EQ(line_of(last), passes.back());
    }
    EXPECT_EQ(problems_, std::vector<std::string>{});
    return passes;
  }

  void end() const { write_file(dest_ / nsel::kEndedFile, ""); }

  TempDir temp_;
  fs::path source_, logs_, dest_, mirrored_;
  nsel::SyncSettings settings_;
  std::vector<std::string> notices_, problems_;
  std::chrono::steady_clock::duration last_elapsed_{};  // of the pass `between` follows
};

}  // namespace

TEST_F(Resident, APassAfterTheFirstLooksOnlyAtWhatChanged) {
  const auto passes = run([&](std::uint64_t pass) {
    if (pass == 1) {
      append_file(logs_ / "raylet.out", "b");
      write_file(logs_ / "new-folder" / "f", "new");
    } else if (pass == 2) {
      end();
    }
  });
  EXPECT_EQ(passes, (std::vector<std::string>{
                        "1 full files=2 copied=2 folders=2 sessions=1",
                        // The changed log and the new folder's file; the report is not looked at.
                        "2 watched files=2 copied=2 folders=2 sessions=1",
                        "3 full files=3 copied=0 folders=3 sessions=1 ended"}));
  EXPECT_EQ(read_file(mirrored_ / "raylet.out"), "ab");
  EXPECT_EQ(read_file(mirrored_ / "new-folder" / "f"), "new");
  EXPECT_EQ(notices_, std::vector<std::string>{});
}

TEST_F(Resident, AWatchedPassWithNothingChangedLooksAtNothing) {
  const auto passes = run([&](std::uint64_t pass) {
    if (pass == 2) end();
  });
  EXPECT_EQ(passes,
            (std::vector<std::string>{"1 full files=2 copied=2 folders=2 sessions=1",
                                      "2 watched files=0 copied=0 folders=0 sessions=1",
                                      "3 full files=2 copied=0 folders=2 sessions=1 ended"}));
}

// The kernel tells a folder's watch nothing of a write through a hard link in another folder:
// the last pass, which looks at every file, still copies it.
TEST_F(Resident, TheLastPassCopiesAChangeNoEventReported) {
  const fs::path elsewhere = temp_.path() / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_hard_link(logs_ / "nsight" / "w_1.nsys-rep", elsewhere / "same-file");
  const auto passes = run([&](std::uint64_t pass) {
    if (pass == 1) {
      // Past the kernel's coarse clock tick, so that the write surely moves the file's time.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const int fd = ::open((elsewhere / "same-file").c_str(), O_WRONLY);
      ASSERT_GE(fd, 0);
      EXPECT_EQ(::pwrite(fd, "REPORT", 6, 0), 6);  // the same size: only the time tells
      ::close(fd);
    } else if (pass == 2) {
      EXPECT_EQ(read_file(mirrored_ / "nsight" / "w_1.nsys-rep"), "report") << "not seen yet";
      end();
    }
  });
  EXPECT_EQ(passes,
            (std::vector<std::string>{"1 full files=2 copied=2 folders=2 sessions=1",
                                      "2 watched files=0 copied=0 folders=0 sessions=1",
                                      "3 full files=2 copied=1 folders=2 sessions=1 ended"}));
  EXPECT_EQ(read_file(mirrored_ / "nsight" / "w_1.nsys-rep"), "REPORT");
}

TEST_F(Resident, ANewSessionBetweenPassesIsCopiedWhole) {
  const std::string second = "session_2026-01-02_04-00-00_000000_8";
  const auto passes = run([&](std::uint64_t pass) {
    if (pass == 1) write_file(source_ / second / "logs" / "raylet.out", "second");
    if (pass == 2) end();
  });
  EXPECT_EQ(passes,
            (std::vector<std::string>{"1 full files=2 copied=2 folders=2 sessions=1",
                                      "2 watched files=1 copied=1 folders=1 sessions=2",
                                      "3 full files=3 copied=0 folders=3 sessions=2 ended"}));
  EXPECT_EQ(read_file(dest_ / "ray" / second / "logs" / "raylet.out"), "second");
}

// A session's logs folder removed and made again is not the folder that was watched: it is looked
// at in full, and the copies of the files gone stay.
TEST_F(Resident, ASessionMadeAgainIsLookedAtInFull) {
  const auto passes = run([&](std::uint64_t pass) {
    if (pass == 1) {
      fs::remove_all(logs_);
      write_file(logs_ / "fresh.log", "fresh");
    } else if (pass == 2) {
      end();
    }
  });
  EXPECT_EQ(passes,
            (std::vector<std::string>{"1 full files=2 copied=2 folders=2 sessions=1",
                                      "2 watched files=1 copied=1 folders=1 sessions=1",
                                      "3 full files=1 copied=0 folders=1 sessions=1 ended"}));
  EXPECT_EQ(read_file(mirrored_ / "fresh.log"), "fresh");
  EXPECT_EQ(read_file(mirrored_ / "raylet.out"), "a");
}

TEST_F(Resident, TooFewWatchesFallBackToFullPassesAndSaySoOnce) {
  settings_.max_watches = 1;  // two folders to watch
  const auto passes = run([&](std::uint64_t pass) {
    if (pass == 1) append_file(logs_ / "raylet.out", "b");
    if (pass == 3) end();
  });
  EXPECT_EQ(passes,
            (std::vector<std::string>{"1 full files=2 copied=2 folders=2 sessions=1",
                                      "2 full files=2 copied=1 folders=2 sessions=1",
                                      "3 full files=2 copied=0 folders=2 sessions=1",
                                      "4 full files=2 copied=0 folders=2 sessions=1 ended"}));
  EXPECT_EQ(notices_, std::vector<std::string>{
                          "watching folders for changes stopped (more than 1 folders to watch (the "
                          "watch limit)): every pass now looks at every file"});
  EXPECT_EQ(read_file(mirrored_ / "raylet.out"), "ab");
}

TEST_F(Resident, NoWatchesMeansEveryPassIsFullAndNothingToSay) {
  settings_.max_watches = 0;
  const auto passes = run([&](std::uint64_t pass) {
    if (pass == 2) end();
  });
  EXPECT_EQ(passes,
            (std::vector<std::string>{"1 full files=2 copied=2 folders=2 sessions=1",
                                      "2 full files=2 copied=0 folders=2 sessions=1",
                                      "3 full files=2 copied=0 folders=2 sessions=1 ended"}));
  EXPECT_EQ(notices_, std::vector<std::string>{});
}

TEST_F(Resident, FullEveryZeroMakesEveryPassFullWhileWatching) {
  settings_.full_every = std::chrono::milliseconds(0);
  const auto passes = run([&](std::uint64_t pass) {
    if (pass == 2) end();
  });
  EXPECT_EQ(passes,
            (std::vector<std::string>{"1 full files=2 copied=2 folders=2 sessions=1",
                                      "2 full files=2 copied=0 folders=2 sessions=1",
                                      "3 full files=2 copied=0 folders=2 sessions=1 ended"}));
  EXPECT_EQ(notices_, std::vector<std::string>{});
}

TEST_F(Resident, EndedBeforeTheFirstPassMakesItTheOnlyOne) {
  end();
  const auto passes = run([](std::uint64_t) {});
  EXPECT_EQ(passes, std::vector<std::string>{"1 full files=2 copied=2 folders=2 sessions=1 ended"});
}

TEST_F(Resident, WithoutEveryItIsOnePassEvenBeforeEnded) {
  settings_.every = std::chrono::milliseconds(0);
  const auto passes = run([](std::uint64_t) {});
  EXPECT_EQ(passes, std::vector<std::string>{"1 full files=2 copied=2 folders=2 sessions=1"});
}

// The wait between passes is `every` from the start of one pass to the start of the next, however
// long the pass took.
TEST_F(Resident, PassesComeEveryPeriod) {
  settings_.every = std::chrono::milliseconds(150);
  std::vector<std::chrono::steady_clock::time_point> starts;
  run([&](std::uint64_t pass) {
    starts.push_back(std::chrono::steady_clock::now() - last_elapsed_);
    if (pass == 1) std::this_thread::sleep_for(std::chrono::milliseconds(60));  // a slow pass
    if (pass == 3) end();
  });
  ASSERT_EQ(starts.size(), 3u);
  for (std::size_t i = 1; i < starts.size(); ++i) {
    EXPECT_GE(starts[i] - starts[i - 1], std::chrono::milliseconds(149)) << i;
    EXPECT_LT(starts[i] - starts[i - 1], std::chrono::milliseconds(1000)) << i;
  }
}
