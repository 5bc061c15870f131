// nsel sync --every between passes: the real binary watching real folders (inotify), changed by
// real writes, renames, memory maps and hard links; the passes read from its --json lines.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using nsel::test::make_temp_dir;
using nsel::test::slurp;
using nsel::test::spit;

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kSession = "session_2026-03-01_10-00-00_000001_9";

// A Ray temp folder with one session of `folders` log folders holding 5 files each.
struct Tree {
  fs::path work;
  fs::path src;
  fs::path log_dir;
  fs::path logs() const { return src / kSession / "logs"; }
  fs::path copy_of(const fs::path& source_file) const {
    const fs::path relative = fs::relative(source_file, src);
    return log_dir / "ray" / relative;
  }
};

Tree make_tree(const std::string& label, int folders) {
  Tree t;
  t.work = make_temp_dir(label);
  t.src = t.work / "ray";
  t.log_dir = t.work / "logs" / "7-logs";
  for (int f = 0; f < folders; ++f) {
    for (int i = 0; i < 5; ++i) {
      spit(t.logs() / ("worker-" + std::to_string(f)) / ("log-" + std::to_string(i) + ".out"),
           std::string(10 + 50 * i, static_cast<char>('a' + f)));
    }
  }
  return t;
}

// A running `nsel sync --every ... --json` and the passes it has reported so far.
class RunningSync {
 public:
  RunningSync(const Tree& t, std::vector<std::string> extra) {
    std::vector<std::string> argv = {kNsel,   "sync",         "--head", "--json",
                                     "--src", t.src.string(), "--dest", t.log_dir.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    started_ = nsel::test::start(argv, {});
  }
  ~RunningSync() {
    if (!finished_) {
      kill(started_.pid, SIGKILL);
      nsel::test::finish(started_);
    }
  }

  std::vector<json> passes() const {
    std::vector<json> found;
    std::istringstream lines(finished_ ? out_ : slurp(started_.output.string() + ".out"));
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) found.push_back(json::parse(line));
    }
    return found;
  }

  // Waits (a minute at most) until `done` holds; false if it never did or nsel sync exited.
  bool wait_until(const std::function<bool()>& done) const {
    for (int i = 0; i < 6000; ++i) {
      if (done()) return true;
      if (waitpid(started_.pid, nullptr, WNOHANG) != 0) return done();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Waits for `count` more passes to be reported after the ones seen now.
  bool wait_passes(size_t count) const {
    const size_t seen = passes().size();
    return wait_until([&] { return passes().size() >= seen + count; });
  }

  nsel::test::RunResult finish() {
    auto result = nsel::test::finish(started_);
    finished_ = true;
    out_ = result.out;
    return result;
  }

 private:
  nsel::test::Started started_;
  bool finished_ = false;
  std::string out_;  // stdout, once finished
};

// Whether the copy of `file` holds what `file` holds now.
bool copied(const Tree& t, const fs::path& file) {
  std::error_code ec;
  return fs::exists(t.copy_of(file), ec) && slurp(t.copy_of(file)) == slurp(file);
}

void expect_all_copied(const Tree& t) {
  for (const auto& entry : fs::recursive_directory_iterator(t.src)) {
    if (!entry.is_regular_file()) continue;
    EXPECT_TRUE(copied(t, entry.path())) << entry.path();
  }
}

TEST(SyncWatch, LaterPassesLookOnlyAtWhatChanged) {
  const Tree t = make_tree("watch", 6);
  RunningSync sync(t, {"--every", "0.1"});
  ASSERT_TRUE(sync.wait_passes(1));
  const json first = sync.passes().front();
  EXPECT_TRUE(first["full"].get<bool>());
  EXPECT_EQ(first["files"], 30);
  EXPECT_EQ(first["copied"], 30);

  // Each change is copied by a pass that looks only at what changed.
  const auto expect_copied_by_a_small_pass = [&](const std::vector<fs::path>& files) {
    const size_t before = sync.passes().size();
    ASSERT_TRUE(sync.wait_until([&] {
      for (const fs::path& file : files)
        if (!copied(t, file)) return false;
      return true;
    })) << files.front();
    ASSERT_TRUE(sync.wait_passes(1));  // the pass that copied them has reported
    const std::vector<json> passes = sync.passes();
    for (size_t i = before; i < passes.size(); ++i) {
      EXPECT_FALSE(passes[i]["full"].get<bool>()) << passes[i].dump();
    }
  };
  const fs::path fresh = t.logs() / "worker-1" / "new.out";
  spit(fresh, "a new log\n");
  expect_copied_by_a_small_pass({fresh});

  const fs::path grown = t.logs() / "worker-2" / "log-3.out";
  { std::ofstream(grown, std::ios::app) << "more lines\n"; }
  expect_copied_by_a_small_pass({grown});

  // A new folder, files written into it after it appeared.
  const fs::path made = t.logs() / "worker-9" / "inner";
  fs::create_directories(made);
  spit(made / "a.out", "first\n");
  spit(made / "b.out", "second\n");
  expect_copied_by_a_small_pass({made / "a.out", made / "b.out"});

  // A whole folder tree written elsewhere and moved in (no event tells of its files).
  const fs::path outside = t.work / "outside";
  spit(outside / "tree" / "deep" / "c.out", "third\n");
  spit(outside / "tree" / "d.out", "fourth\n");
  fs::rename(outside / "tree", t.logs() / "moved-in");
  expect_copied_by_a_small_pass(
      {t.logs() / "moved-in" / "deep" / "c.out", t.logs() / "moved-in" / "d.out"});

  // A file written under a temporary name and renamed into place, here and from elsewhere.
  spit(t.logs() / "worker-3" / ".log.tmp", "renamed here\n");
  fs::rename(t.logs() / "worker-3" / ".log.tmp", t.logs() / "worker-3" / "renamed.out");
  spit(outside / "e.out", "renamed from outside\n");
  fs::rename(outside / "e.out", t.logs() / "worker-4" / "e.out");
  expect_copied_by_a_small_pass(
      {t.logs() / "worker-3" / "renamed.out", t.logs() / "worker-4" / "e.out"});

  // A new session.
  const fs::path other = t.src / "session_2026-03-01_11-00-00_000002_9" / "logs" / "x.out";
  spit(other, "another session\n");
  ASSERT_TRUE(sync.wait_until([&] { return copied(t, other); }));

  // Passes with nothing new copy nothing and look at no file.
  ASSERT_TRUE(sync.wait_passes(3));
  const json idle = sync.passes().back();
  EXPECT_FALSE(idle["full"].get<bool>());
  EXPECT_EQ(idle["copied"], 0);
  EXPECT_EQ(idle["files"], 0);

  spit(t.log_dir / "ENDED", "");
  const auto result = sync.finish();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const std::vector<json> passes = sync.passes();
  ASSERT_GE(passes.size(), 3u);
  for (size_t i = 1; i + 1 < passes.size(); ++i) {
    EXPECT_FALSE(passes[i]["full"].get<bool>()) << passes[i].dump();
    EXPECT_LT(passes[i]["files"].get<int>(), 10) << passes[i].dump();
  }
  EXPECT_TRUE(passes.back()["full"].get<bool>());
  EXPECT_TRUE(passes.back()["ended"].get<bool>());
  EXPECT_EQ(passes.back()["files"], 30 + 1 + 2 + 2 + 2 + 1);
  expect_all_copied(t);
  // What the loop learnt was written down: a later one-shot sync finds nothing to copy.
  const auto again = nsel::test::run(
      {kNsel, "sync", "--head", "--json", "--src", t.src.string(), "--dest", t.log_dir.string()},
      {});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json::parse(again.out)["copied"], 0) << again.out;
  fs::remove_all(t.work);
}

TEST(SyncWatch, TheLastPassLooksAtEveryFileEvenWhatNoEventReported) {
  const Tree t = make_tree("watch-final", 3);
  RunningSync sync(t, {"--every", "0.1"});
  ASSERT_TRUE(sync.wait_passes(1));
  const fs::path mapped = t.logs() / "worker-0" / "log-4.out";
  const fs::path linked = t.logs() / "worker-1" / "log-4.out";
  const std::string text = "written through a memory map";
  const int fd = ::open(mapped.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << mapped;
  // Mapped until the end: the file is closed for good (IN_CLOSE_WRITE) only when unmapped.
  void* memory = ::mmap(nullptr, text.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(memory, MAP_FAILED);
  fs::create_directories(t.work / "elsewhere");
  fs::create_hard_link(linked, t.work / "elsewhere" / "link.out");
  ASSERT_TRUE(sync.wait_passes(2));  // whatever those raised is handled
  // Writes the kernel reports to no watch on the source folders.
  std::memcpy(memory, text.data(), text.size());
  ::msync(memory, text.size(), MS_SYNC);
  { std::ofstream(t.work / "elsewhere" / "link.out", std::ios::app) << "through a hard link\n"; }
  ASSERT_NE(slurp(mapped), slurp(t.copy_of(mapped)));
  // Passes that look only at what the kernel reported do not see these changes...
  ASSERT_TRUE(sync.wait_passes(3));
  EXPECT_FALSE(copied(t, mapped));
  EXPECT_FALSE(copied(t, linked));
  // ...the last pass, full, does.
  spit(t.log_dir / "ENDED", "");
  const auto result = sync.finish();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(sync.passes().back()["full"].get<bool>());
  EXPECT_EQ(sync.passes().back()["copied"], 2);
  expect_all_copied(t);
  ::munmap(memory, text.size());
  fs::remove_all(t.work);
}

TEST(SyncWatch, APeriodicFullPassCopiesWhatNoEventReported) {
  const Tree t = make_tree("watch-periodic", 2);
  RunningSync sync(t, {"--every", "0.1", "--full-every", "0.5"});
  ASSERT_TRUE(sync.wait_passes(1));
  const fs::path linked = t.logs() / "worker-1" / "log-2.out";
  fs::create_hard_link(linked, t.work / "link.out");
  ASSERT_TRUE(sync.wait_passes(2));
  { std::ofstream(t.work / "link.out", std::ios::app) << "through a hard link\n"; }
  ASSERT_TRUE(sync.wait_until([&] { return copied(t, linked); }));
  spit(t.log_dir / "ENDED", "");
  EXPECT_EQ(sync.finish().exit_code, 0);
  // Copied by a full pass before the last; passes in between looked only at what changed.
  const std::vector<json> passes = sync.passes();
  ASSERT_GE(passes.size(), 3u);
  int copying = 0;
  for (size_t i = 1; i + 1 < passes.size(); ++i) {
    if (passes[i]["copied"] == 0) continue;
    ++copying;
    EXPECT_TRUE(passes[i]["full"].get<bool>()) << passes[i].dump();
    EXPECT_EQ(passes[i]["ended"], false);
  }
  EXPECT_EQ(copying, 1);
  EXPECT_TRUE(std::any_of(passes.begin(), passes.end(),
                          [](const json& pass) { return !pass["full"].get<bool>(); }));
  fs::remove_all(t.work);
}

TEST(SyncWatch, TooFewWatchesFallBackToFullPassesAndSaySoOnce) {
  const Tree t = make_tree("watch-limit", 4);
  RunningSync sync(t, {"--every", "0.1", "--max-watches", "2", "--quiet"});
  ASSERT_TRUE(sync.wait_passes(1));
  const fs::path fresh = t.logs() / "worker-3" / "late.out";
  spit(fresh, "written after the first pass\n");
  ASSERT_TRUE(sync.wait_until([&] { return copied(t, fresh); }));
  ASSERT_TRUE(sync.wait_passes(2));
  spit(t.log_dir / "ENDED", "");
  const auto result = sync.finish();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err,
            "nsel sync: watching folders for changes stopped (more than 2 folders to watch "
            "(the watch limit)): every pass now looks at every file\n");
  const std::vector<json> passes = sync.passes();
  ASSERT_GE(passes.size(), 4u);
  for (const json& pass : passes) {
    EXPECT_TRUE(pass["full"].get<bool>()) << pass.dump();
    EXPECT_GE(pass["files"].get<int>(), 20) << pass.dump();
  }
  expect_all_copied(t);
  fs::remove_all(t.work);
}

TEST(SyncWatch, NoWatchesMeansEveryPassIsFullAndNothingToSay) {
  const Tree t = make_tree("watch-none", 2);
  RunningSync sync(t, {"--every", "0.1", "--max-watches", "0", "--quiet"});
  ASSERT_TRUE(sync.wait_passes(1));
  const fs::path fresh = t.logs() / "worker-0" / "late.out";
  spit(fresh, "written after the first pass\n");
  ASSERT_TRUE(sync.wait_until([&] { return copied(t, fresh); }));
  spit(t.log_dir / "ENDED", "");
  const auto result = sync.finish();
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.err, "");
  const std::vector<json> passes = sync.passes();
  ASSERT_GE(passes.size(), 2u);
  for (const json& pass : passes) EXPECT_TRUE(pass["full"].get<bool>()) << pass.dump();
  expect_all_copied(t);
  fs::remove_all(t.work);
}

TEST(SyncWatch, BadFullPassOrWatchSettingsAreRejectedWithOneLine) {
  const auto full = nsel::test::run(
      {kNsel, "sync", "--src", "/tmp", "--dest", "/tmp/x", "--every", "1", "--full-every", "-1"},
      {});
  EXPECT_EQ(full.exit_code, 2);
  EXPECT_EQ(full.err,
            "nsel: error: --full-every='-1': not a number of seconds; expected the most seconds "
            "between passes that look at every file, e.g. '600'; '0': every pass does\n");
  const auto watches = nsel::test::run(
      {kNsel, "sync", "--src", "/tmp", "--dest", "/tmp/x", "--max-watches", "many"}, {});
  EXPECT_EQ(watches.exit_code, 2);
  EXPECT_EQ(watches.err,
            "nsel: error: --max-watches='many': not a whole number; expected the most folders "
            "to watch for changes, e.g. '10000'; '0': none\n");
}

}  // namespace
