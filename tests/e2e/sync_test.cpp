// Gathering reports with nsel sync, end to end: a real nsys report among log files in
// Ray-style trees, the real nsel binary, killed at random moments.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "nsel/sync/mirror.hpp"
#include "nsel/sys/host.hpp"
#include "real_reports.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using nsel::host_name;
using nsel::e2e::place;
using nsel::e2e::real_files;
using nsel::e2e::Reports;
using nsel::e2e::start;
using nsel::e2e::wait_for;
using nsel::test::make_temp_dir;
using nsel::test::run;
using nsel::test::slurp;
using nsel::test::spit;

namespace {

const std::string kNsel = NSEL_BINARY;

struct Tree {
  fs::path src;
  fs::path log_dir;
  std::string session = "session_2026-02-01_09-00-00_000001_7";
  fs::path logs() const { return src / session / "logs"; }
  fs::path copy_of(const fs::path& source_file) const {
    return log_dir / "ray" / session / "logs" / fs::relative(source_file, logs());
  }
};

Tree small_tree(const std::string& label) {
  Tree t;
  const fs::path work = make_temp_dir(label);
  t.src = work / "ray";
  t.log_dir = work / "logs" / "1-logs";
  for (int i = 0; i < 20; ++i) {
    spit(t.logs() / ("worker-" + std::to_string(i) + ".out"), std::string(100 * i, 'x'));
  }
  place(real_files().report, t.logs() / "nsight" / real_files().report.filename());
  fs::create_directory_symlink(t.session, t.src / "session_latest");
  return t;
}

std::vector<fs::path> partial_files(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().string().ends_with(std::string(nsel::kPartialSuffix))) {
      found.push_back(entry.path());
    }
  }
  return found;
}

TEST_F(Reports, SyncCopiesOnlyWhatChangedAndNeverDeletes) {
  const Tree t = small_tree("sync");
  nsel::SyncSettings settings;
  settings.source = t.src;
  settings.log_dir = t.log_dir;
  nsel::PassStats first = nsel::sync_pass(settings);
  EXPECT_EQ(first.files, 21u);
  EXPECT_EQ(first.copied, 21u);
  EXPECT_EQ(first.failed, 0u);
  for (const auto& entry : fs::recursive_directory_iterator(t.logs())) {
    if (!entry.is_regular_file()) continue;
    const fs::path copy = t.copy_of(entry.path());
    EXPECT_EQ(slurp(copy), slurp(entry.path())) << copy;
    EXPECT_EQ(fs::last_write_time(copy), fs::last_write_time(entry.path())) << copy;
  }
  EXPECT_FALSE(fs::exists(t.log_dir / "ray" / "session_latest"));
  EXPECT_EQ(nsel::sync_pass(settings).copied, 0u);

  // A report still being written grows: it is copied again, as a new file renamed into place.
  const fs::path report = t.logs() / "nsight" / real_files().report.filename();
  const auto inode_before = [&] {
    struct stat st {};
    stat(t.copy_of(report).c_str(), &st);
    return st.st_ino;
  }();
  { std::ofstream(report, std::ios::app) << "more profile data"; }
  const nsel::PassStats grown = nsel::sync_pass(settings);
  EXPECT_EQ(grown.copied, 1u);
  EXPECT_EQ(slurp(t.copy_of(report)), slurp(report));
  struct stat after {};
  stat(t.copy_of(report).c_str(), &after);
  EXPECT_NE(after.st_ino, inode_before);  // replaced whole, never rewritten in place

  // Same size, new time: copied again too.
  fs::last_write_time(report, fs::last_write_time(report) + std::chrono::seconds(5));
  EXPECT_EQ(nsel::sync_pass(settings).copied, 1u);

  // A file removed at the source stays at the destination; a copy removed at the destination
  // comes back.
  fs::remove(t.logs() / "worker-3.out");
  fs::remove(t.copy_of(t.logs() / "worker-4.out"));
  const nsel::PassStats last = nsel::sync_pass(settings);
  EXPECT_EQ(last.copied, 1u);
  EXPECT_TRUE(fs::exists(t.copy_of(t.logs() / "worker-3.out")));
  EXPECT_TRUE(fs::exists(t.copy_of(t.logs() / "worker-4.out")));
  EXPECT_TRUE(partial_files(t.log_dir).empty());
  fs::remove_all(t.src.parent_path());
}

TEST_F(Reports, SyncNodesGoUnderTheirOwnFolder) {
  const Tree t = small_tree("sync-node");
  const auto r = run({kNsel, "sync", "--quiet", "--src", t.src.string(), "--dest",
                      t.log_dir.string(), "--node", "10.1.2.3"},
                     {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(
      fs::is_regular_file(t.log_dir / "ray" / "10.1.2.3" / t.session / "logs" / "worker-1.out"));
  // Without --node or --head, a node other than SLURM's node 0 uses its host name.
  const auto by_host =
      run({kNsel, "sync", "--quiet", "--src", t.src.string(), "--dest", t.log_dir.string()},
          {{"SLURM_NODEID", "3"}});
  ASSERT_EQ(by_host.exit_code, 0) << by_host.err;
  EXPECT_TRUE(
      fs::is_regular_file(t.log_dir / "ray" / host_name() / t.session / "logs" / "worker-1.out"));
  fs::remove_all(t.src.parent_path());
}

TEST_F(Reports, SyncRepeatsUntilThePassThatSeesEnded) {
  const Tree t = small_tree("sync-loop");
  const pid_t sync = start(
      {kNsel, "sync", "--quiet", "--head", "--src", t.src.string(), "--dest", t.log_dir.string()},
      {{"RAY_LOG_SYNC_FREQUENCY", "0.2"}});
  const fs::path first_copy = t.copy_of(t.logs() / "worker-1.out");
  for (int i = 0; i < 500 && !fs::exists(first_copy); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(first_copy));
  EXPECT_EQ(wait_for(sync, std::chrono::milliseconds(600)), -1);  // still repeating
  // The job ends: its last words are written, then ENDED.
  spit(t.logs() / "driver-final.log", "done\n");
  spit(t.log_dir / "ENDED", "");
  const int status = wait_for(sync, std::chrono::seconds(20));
  if (status == -1) kill(sync, SIGKILL);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(slurp(t.copy_of(t.logs() / "driver-final.log")), "done\n");
  fs::remove_all(t.src.parent_path());
}

TEST_F(Reports, SyncRejectsBadSettingsWithOneLine) {
  const auto every =
      run({kNsel, "sync", "--src", "/tmp", "--dest", "/tmp/x", "--every", "soon"}, {});
  EXPECT_EQ(every.exit_code, 2);
  EXPECT_EQ(every.err,
            "nsel: error: --every='soon': not a positive number of seconds; expected seconds "
            "between passes, e.g. '30' or '0.5'\n");
  const auto frequency =
      run({kNsel, "sync", "--src", "/tmp", "--dest", "/tmp/x"}, {{"RAY_LOG_SYNC_FREQUENCY", "-5"}});
  EXPECT_EQ(frequency.exit_code, 2);
  EXPECT_EQ(frequency.err,
            "nsel: error: RAY_LOG_SYNC_FREQUENCY='-5': not a positive number of seconds; expected "
            "seconds between passes, e.g. '30' or '0.5'\n");
  const auto nowhere = run({kNsel, "sync", "--src", "/tmp"}, {{"SLURM_JOB_ID", "5"}});
  EXPECT_EQ(nowhere.exit_code, 2);
  EXPECT_EQ(nowhere.err,
            "nsel: error: no destination: --dest is not given and BASE_LOG_DIR is not set; "
            "expected --dest LOG_DIR, or BASE_LOG_DIR and SLURM_JOB_ID (LOG_DIR is then "
            "$BASE_LOG_DIR/$SLURM_JOB_ID-logs)\n");
}

// A source tree deeper than PATH_MAX: what sync cannot copy is told on one line per problem,
// each name cut at 512 bytes as the docs promise (before: one 4,141-byte line).
TEST_F(Reports, SyncTellsANamePastPathMaxOnALineOfBoundedLength) {
  Tree t = small_tree("sync-deep");
  int folder = ::open(t.logs().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(folder, 0);
  const std::string part(250, 'd');
  for (int depth = 0; depth < 20; ++depth) {  // 20 x 251 bytes: past PATH_MAX (4096)
    ASSERT_EQ(::mkdirat(folder, part.c_str(), 0755), 0) << std::strerror(errno);
    const int inner = ::openat(folder, part.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(folder);
    ASSERT_GE(inner, 0);
    folder = inner;
  }
  const int file = ::openat(folder, "deep.log", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(file, 0);
  ::close(file);
  ::close(folder);
  const auto r = run({kNsel, "sync", "--src", t.src.string(), "--dest", t.log_dir.string()}, {});
  EXPECT_EQ(r.exit_code, 1) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("nsel sync: cannot "), std::string::npos) << r.err.substr(0, 2000);
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 1200u) << line.substr(0, 300);
  }
  // The shallow files were still copied.
  EXPECT_TRUE(fs::is_regular_file(t.copy_of(t.logs() / "worker-1.out")));
  run({"/bin/rm", "-rf", t.src.parent_path().string()}, {});
}

// Deterministic content for version `version` of file `index`.
std::string content(int index, int version, size_t size) {
  std::string text(size, '\0');
  std::uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(index * 1000 + version + 1);
  for (size_t i = 0; i + 8 <= size; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(&text[i], &x, 8);
  }
  return text;
}

TEST_F(Reports, SyncKilledAtRandomMomentsNeverLeavesAPartialFile) {
  const fs::path work = make_temp_dir("sync-kill");
  const fs::path src = work / "ray";
  const fs::path log_dir = work / "logs";
  const std::string session = "session_2026-02-02_09-00-00_000001_8";
  const fs::path logs = src / session / "logs";
  std::mt19937 random(std::random_device{}());
  const unsigned seed = random();
  random.seed(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Every version each file has had: a copy must be exactly one of them.
  std::map<fs::path, std::set<std::size_t>> versions;
  std::map<fs::path, int> version_of;
  std::vector<fs::path> big;
  const auto write_version = [&](const fs::path& file, int index, size_t size) {
    const std::string text = content(index, version_of[file]++, size);
    spit(file, text);
    versions[fs::relative(file, logs)].insert(std::hash<std::string>{}(text));
  };
  for (int i = 0; i < 24; ++i) {  // ~250 MB of reports
    big.push_back(logs / "nsight" /
                  ("dtensor_policy_worker_2:4_" + std::to_string(1000 + i) + ".nsys-rep"));
    write_version(big.back(), i, (4u << 20) + (random() % (12u << 20)));
  }
  for (int i = 0; i < 1500; ++i) {
    write_version(
        logs / ("folder" + std::to_string(i % 15)) / ("worker-" + std::to_string(i) + ".out"),
        100 + i, 1024 + random() % 20000);
  }

  const fs::path copies = log_dir / "ray" / session / "logs";
  std::map<fs::path, std::pair<std::uintmax_t, fs::file_time_type>> checked;
  // Every file under a final name is complete: equal to some version of its source.
  const auto check_copies = [&] {
    if (!fs::exists(copies)) return;
    for (const auto& entry : fs::recursive_directory_iterator(copies)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || name.ends_with(std::string(nsel::kPartialSuffix)) ||
          entry.path().parent_path().filename() == ".nsel-sync") {
        continue;
      }
      const auto stamp = std::make_pair(entry.file_size(), entry.last_write_time());
      if (checked[entry.path()] == stamp) continue;
      checked[entry.path()] = stamp;
      const fs::path relative = fs::relative(entry.path(), copies);
      ASSERT_EQ(versions.count(relative), 1u) << relative;
      EXPECT_EQ(versions[relative].count(std::hash<std::string>{}(slurp(entry.path()))), 1u)
          << "partial or foreign content under the final name " << entry.path();
    }
  };

  int kills = 0;
  int rounds = 0;
  const std::vector<std::string> argv = {kNsel,   "sync",       "--quiet", "--head",
                                         "--src", src.string(), "--dest",  log_dir.string()};
  while (kills < 20 && rounds < 200) {
    ++rounds;
    const pid_t sync = start(argv, {});
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + random() % 60));
    kill(sync, SIGKILL);
    int status = 0;
    waitpid(sync, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++kills;
    check_copies();
    if (HasFatalFailure()) break;
    // The job goes on: reports are rewritten, so there is always more to copy (enough that a
    // pass outlasts the kill's delay on an idle machine too).
    for (int n = 0; n < 3; ++n) {
      const size_t which = random() % big.size();
      write_version(big[which], static_cast<int>(which), (4u << 20) + (random() % (12u << 20)));
    }
  }
  EXPECT_GE(kills, 20) << "in " << rounds << " rounds";
  std::printf("[ sync-kill ] %d SIGKILLs in %d rounds (seed %u)\n", kills, rounds, seed);

  const auto finished = run(argv, {});
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  check_copies();
  for (const auto& entry : fs::recursive_directory_iterator(logs)) {
    if (!entry.is_regular_file()) continue;
    EXPECT_EQ(slurp(copies / fs::relative(entry.path(), logs)), slurp(entry.path()))
        << entry.path();
  }
  EXPECT_TRUE(partial_files(log_dir).empty());
  fs::remove_all(work);
}

}  // namespace
