// Every finder sees the same reports: discover_reports (`nsel ls`, `nsel check`) and
// find_report_files (`nsel report`, `nsel diff`) on hidden names, links and nsel's own
// temporaries; and a folder that cannot be read is told, never passed over.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "nsel/core/manifest.hpp"
#include "nsel/reports/discovery.hpp"
#include "nsel/reports/recovery.hpp"
#include "nsel/reports/report_files.hpp"
#include "nsel/sys/host.hpp"
#include "nsel/sys/proc.hpp"
#include "sample_manifest.hpp"

namespace fs = std::filesystem;

namespace {

class Discover : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nsel-discovery-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_ / "root" / "locked", fs::perms::owner_all, ec);
    fs::remove_all(dir_);
  }
  // A finished report: big enough to hold a profile, last changed long ago.
  static void report_at(const fs::path& path) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << std::string(8192, 'r');
    fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::minutes(10));
  }
  fs::path dir_;
};

std::set<std::string> paths_of(const nsel::Discovery& found) {
  std::set<std::string> paths;
  for (const nsel::FoundReport& r : found.reports) paths.insert(r.path.string());
  return paths;
}

std::set<std::string> paths_of(const std::vector<fs::path>& found) {
  std::set<std::string> paths;
  for (const fs::path& p : found) paths.insert(p.string());
  return paths;
}

}  // namespace

TEST_F(Discover, HiddenNamesAndLinkedReportsAreSeenByEveryFinder) {
  const fs::path root = dir_ / "root";
  report_at(root / "a" / ".hidden_worker_2:4_11.nsys-rep");  // a worker named ".hidden_worker"
  report_at(root / ".dot-folder" / "dtensor_policy_worker_2:4_12.nsys-rep");
  report_at(dir_ / "elsewhere" / "dtensor_policy_worker_2:4_13.nsys-rep");
  fs::create_directories(root / "b");
  fs::create_symlink(dir_ / "elsewhere" / "dtensor_policy_worker_2:4_13.nsys-rep",
                     root / "b" / "dtensor_policy_worker_2:4_13.nsys-rep");  // a linked report
  report_at(root / "c" / "dtensor_policy_worker_2:4_14.nsys-rep");
  fs::create_symlink("dtensor_policy_worker_2:4_14.nsys-rep",
                     root / "c" / "alias_2:4_15.nsys-rep");  // the same file twice: once
  report_at(root / "a" / ".dtensor_policy_worker_2:4_16.nsel-recover-99.nsys-rep");  // nsel's own
  // What nsys writes under `nsel exec` until the report gets its own name: nsel's own too.
  report_at(root / "a" / ".dtensor_policy_worker_2:4_18.nsel4242-0a1b2c3d.nsys-rep");
  fs::create_directories(root / "d");
  fs::create_symlink(dir_ / "nowhere_2:4_17.nsys-rep", root / "d" / "gone_2:4_17.nsys-rep");

  const nsel::Discovery found = nsel::discover_reports({root});
  const std::set<std::string> expected = {
      (root / "a" / ".hidden_worker_2:4_11.nsys-rep").string(),
      (root / ".dot-folder" / "dtensor_policy_worker_2:4_12.nsys-rep").string(),
      (root / "b" / "dtensor_policy_worker_2:4_13.nsys-rep").string(),
      (root / "c" / "dtensor_policy_worker_2:4_14.nsys-rep").string()};
  EXPECT_EQ(paths_of(found), expected);
  EXPECT_EQ(paths_of(nsel::find_report_files({root})), expected);
  for (const nsel::FoundReport& r : found.reports) {
    EXPECT_EQ(r.state, nsel::ReportState::complete) << r.path << ": " << r.reason;
    const std::string name = r.path.filename().string();
    EXPECT_EQ(r.worker, name.starts_with(".hidden") ? ".hidden_worker" : "dtensor_policy_worker")
        << name;
    EXPECT_EQ(r.window, "2:4") << name;
  }
  EXPECT_TRUE(std::any_of(found.notes.begin(), found.notes.end(),
                          [](const nsel::DiscoveryNote& n) { return n.kind == "linked_report"; }));
}

// As root, permission bits stop no read: the search runs in a child that has become `nobody`.
TEST_F(Discover, AFolderThatCannotBeReadIsToldByEveryFinder) {
  const fs::path root = dir_ / "root";
  report_at(root / "ok" / "dtensor_policy_worker_2:4_21.nsys-rep");
  report_at(root / "locked" / "dtensor_policy_worker_2:4_22.nsys-rep");
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(root / "locked", fs::perms::none);
  int channel[2];
  ASSERT_EQ(::pipe(channel), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(channel[0]);
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
         ::setresuid(65534, 65534, 65534) != 0)) {
      ::_exit(90);
    }
    std::string text;
    const nsel::Discovery found = nsel::discover_reports({root});
    for (const nsel::FoundReport& r : found.reports) text += "report " + r.path.string() + "\n";
    for (const nsel::DiscoveryNote& n : found.notes) text += n.kind + " " + n.path + "\n";
    std::vector<nsel::UnreadableFolder> unreadable;
    for (const fs::path& p : nsel::find_report_files({root}, "PATH", &unreadable)) {
      text += "file " + p.string() + "\n";
    }
    for (const nsel::UnreadableFolder& u : unreadable) text += "unread " + u.folder.string() + "\n";
    const bool sent =
        ::write(channel[1], text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::_exit(sent ? 0 : 91);
  }
  ::close(channel[1]);
  std::string said;
  char buffer[4096];
  for (ssize_t n; (n = ::read(channel[0], buffer, sizeof buffer)) > 0;) said.append(buffer, n);
  ::close(channel[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 90) GTEST_SKIP() << "cannot become nobody (65534) here";
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const std::string ok = (root / "ok" / "dtensor_policy_worker_2:4_21.nsys-rep").string();
  const std::string locked = (root / "locked").string();
  EXPECT_EQ(said, "report " + ok + "\n" + std::string(nsel::kUnreadableFolderNote) + " " + locked +
                      "\nfile " + ok + "\nunread " + locked + "\n");
}

// The launcher killed between nsys's end and the rename: the report is under the launch's hidden
// name. Discovery says where it is, and naming it puts it under the manifest's name, never over
// another file.
TEST_F(Discover, AReportLeftUnderItsLaunchsHiddenNameIsNamedAndCanBeNamed) {
  const fs::path root = dir_ / "root";
  fs::create_directories(root);
  // A launcher and a program that have ended: children of ours, started and reaped.
  const auto ended_pid = [] {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    return child;
  };
  const pid_t launcher = ended_pid();
  const pid_t program = ended_pid();
  ASSERT_GT(launcher, 0);
  ASSERT_GT(program, 0);
  const std::string pid = std::to_string(program);
  nsel::Manifest m = nsel::test::window_manifest();
  m.pid = program;
  m.nsel_pid = launcher;
  m.host = nsel::host_name();
  m.command = {"nsys", "profile", "-o", (root / ".w_2:4_%p.nsel77-abcd").string(), "prog"};
  m.report = (root / ("w_2:4_" + pid + ".nsys-rep")).string();
  m.start_time = "2026-12-02T05:00:00.000Z";
  std::ofstream(root / ("w_2:4_" + pid + ".nsel.json")) << nsel::serialize_manifest(m);
  report_at(root / (".w_2:4_" + pid + ".nsel77-abcd.nsys-rep"));

  const nsel::Discovery found = nsel::discover_reports({root.string()});
  ASSERT_EQ(found.reports.size(), 1u);
  EXPECT_EQ(found.reports[0].state, nsel::ReportState::missing);
  EXPECT_NE(
      found.reports[0].reason.find("nsys's report is '" +
                                   (root / (".w_2:4_" + pid + ".nsel77-abcd.nsys-rep")).string() +
                                   "', not yet under its name: 'nsel recover' names it"),
      std::string::npos)
      << found.reports[0].reason;

  const nsel::Naming named = nsel::name_unnamed_report(m);
  EXPECT_TRUE(named.named) << named.message;
  EXPECT_TRUE(fs::is_regular_file(m.report));
  EXPECT_FALSE(fs::exists(root / (".w_2:4_" + pid + ".nsel77-abcd.nsys-rep")));
  const nsel::Discovery after = nsel::discover_reports({root.string()});
  ASSERT_EQ(after.reports.size(), 1u);
  EXPECT_EQ(after.reports[0].state, nsel::ReportState::complete) << after.reports[0].reason;

  // Never over another file: a second hidden report for a name that is taken stays where it is.
  report_at(root / (".w_2:4_" + pid + ".nsel77-abcd.nsys-rep"));
  const nsel::Naming refused = nsel::name_unnamed_report(m);
  EXPECT_FALSE(refused.named);
  EXPECT_TRUE(fs::exists(root / (".w_2:4_" + pid + ".nsel77-abcd.nsys-rep")));
}

// A mirror (nsel sync never deletes) keeps the copy of a launch's pending manifest it took before
// the program's pid was known: that copy is the same launch as the manifest under the report's
// name, never a second process "killed before it started". A pending manifest of another launch
// (another nsel pid) still counts.
TEST_F(Discover, APendingManifestCopiedBeforeItsLaunchClaimedItsNameIsThatLaunch) {
  const fs::path root = dir_ / "root";
  fs::create_directories(root);
  nsel::Manifest m = nsel::test::window_manifest();
  m.nsel_pid = 999999;  // a launcher that has ended, on this host
  m.host = nsel::host_name();
  m.start_time = "2026-12-02T05:00:00.000Z";
  m.report = (root / "w_2:4_%p.nsys-rep").string();
  std::ofstream(root / ".w-pending-999999-0a1b2c3d.nsel.json") << nsel::serialize_manifest(m);
  nsel::Manifest claimed = m;
  claimed.pid = 4242;
  claimed.report = (root / "w_2:4_4242.nsys-rep").string();
  claimed.state = "complete";
  claimed.end_time = "2026-12-02T05:00:09.000Z";
  claimed.exit_status = 0;
  std::ofstream(root / "w_2:4_4242.nsel.json") << nsel::serialize_manifest(claimed);
  report_at(root / "w_2:4_4242.nsys-rep");

  const nsel::Discovery found = nsel::discover_reports({root.string()});
  ASSERT_EQ(found.reports.size(), 1u);
  EXPECT_EQ(found.reports[0].state, nsel::ReportState::complete) << found.reports[0].reason;

  nsel::Manifest other = m;
  other.nsel_pid = 999998;
  std::ofstream(root / ".w-pending-999998-0a1b2c3e.nsel.json") << nsel::serialize_manifest(other);
  const nsel::Discovery two = nsel::discover_reports({root.string()});
  ASSERT_EQ(two.reports.size(), 2u);
  EXPECT_EQ(two.reports[0].state == nsel::ReportState::missing ||
                two.reports[1].state == nsel::ReportState::missing,
            true);
}

// A launch on this host name whose writer is not in this process's PID namespace, or ran under
// another boot: whether it runs is looked for in its namespace, and where nobody here can tell,
// it is "running" with the reason, never "killed".
TEST_F(Discover, AWriterInAnotherNamespaceOrBootIsNeverCalledKilledWhenItCannotBeTold) {
  const fs::path root = dir_ / "root";
  fs::create_directories(root);
  const auto own_namespace = nsel::own_pid_namespace();
  ASSERT_TRUE(own_namespace.has_value());
  nsel::Manifest m = nsel::test::window_manifest();
  m.pid = 4242;
  m.nsel_pid = 4241;
  m.host = nsel::host_name();
  m.start_time = "2026-12-02T05:00:00.000Z";
  m.report = (root / "w_2:4_4242.nsys-rep").string();
  const auto judged = [&](const nsel::Manifest& manifest) {
    std::ofstream(root / "w_2:4_4242.nsel.json") << nsel::serialize_manifest(manifest);
    const nsel::Discovery found = nsel::discover_reports({root.string()});
    EXPECT_EQ(found.reports.size(), 1u);
    return found.reports.at(0);
  };

  // Another boot (of this host, or another machine of its name): nobody here can tell.
  nsel::Manifest other_boot = m;
  other_boot.boot_id = "00000000-0000-0000-0000-000000000000";
  other_boot.pid_namespace = own_namespace;
  const nsel::FoundReport booted = judged(other_boot);
  EXPECT_EQ(booted.state, nsel::ReportState::running) << booted.reason;
  EXPECT_NE(booted.reason.find("it ran under another boot of '" + m.host + "'"), std::string::npos)
      << booted.reason;

  // This namespace, this boot: the ids are looked up here, as before (4241 and 4242 ended).
  nsel::Manifest here = m;
  here.boot_id = nsel::kernel_boot_id();
  here.pid_namespace = own_namespace;
  here.nsel_pid = 999999;
  here.pid = 999998;
  EXPECT_EQ(judged(here).state, nsel::ReportState::missing);
  here.nsel_pid = ::getpid();  // this process: alive
  EXPECT_EQ(judged(here).state, nsel::ReportState::running);

  // A namespace no process here is in (one that ended, or one this process cannot see into):
  // from the host's own namespace every namespace is seen, so it has ended; elsewhere, unknown.
  nsel::Manifest unseen = here;
  unseen.pid_namespace = 1;  // no namespace has inode 1
  unseen.nsel_pid = ::getpid();
  const nsel::FoundReport gone = judged(unseen);
  if (*own_namespace == nsel::kInitialPidNamespace) {
    EXPECT_EQ(gone.state, nsel::ReportState::missing) << gone.reason;
    EXPECT_NE(gone.reason.find("it was killed"), std::string::npos) << gone.reason;
  } else {
    EXPECT_EQ(gone.state, nsel::ReportState::running) << gone.reason;
    EXPECT_NE(gone.reason.find("which this process cannot see into"), std::string::npos)
        << gone.reason;
  }
  // A manifest of an older nsel (no namespace, no boot) is judged as before.
  EXPECT_EQ(judged(m).state, nsel::ReportState::missing);
}

namespace {

const nsel::FoundReport& only(const nsel::Discovery& found, const std::string& file_name) {
  const auto it = std::find_if(found.reports.begin(), found.reports.end(),
                               [&](const auto& r) { return r.path.filename() == file_name; });
  if (it == found.reports.end()) throw std::runtime_error(file_name + " not found");
  return *it;
}

bool has_note(const nsel::Discovery& found, const std::string& kind) {
  return std::any_of(found.notes.begin(), found.notes.end(),
                     [&](const nsel::DiscoveryNote& n) { return n.kind == kind; });
}

}  // namespace

TEST_F(Discover, RaySessionsAndSlurmLogFoldersGiveSessionJobAndNode) {
  const fs::path ray = dir_ / "ray";
  report_at(ray / "session_2026-12-01_10-00-00_000001_11" / "logs" / "nsight" /
            "dtensor_policy_worker_2:4_101.nsys-rep");
  const fs::path slurm = dir_ / "slurm";
  report_at(slurm / "4242-logs" / "ray" / "node07" / "session_2026-12-01_11-00-00_000002_22" /
            "logs" / "nsight" / "dtensor_policy_worker_2:4_202.nsys-rep");
  const nsel::Discovery found = nsel::discover_reports({ray, slurm});
  ASSERT_EQ(found.reports.size(), 2u);
  const auto& local = only(found, "dtensor_policy_worker_2:4_101.nsys-rep");
  EXPECT_EQ(local.session, "session_2026-12-01_10-00-00_000001_11");
  EXPECT_EQ(local.job, "");
  EXPECT_EQ(local.worker, "dtensor_policy_worker");
  EXPECT_EQ(local.window, "2:4");
  EXPECT_EQ(local.pid, 101);
  EXPECT_EQ(local.state, nsel::ReportState::complete);
  const auto& gathered = only(found, "dtensor_policy_worker_2:4_202.nsys-rep");
  EXPECT_EQ(gathered.job, "4242");
  EXPECT_EQ(gathered.node, "node07");
  EXPECT_EQ(gathered.session, "session_2026-12-01_11-00-00_000002_22");
  EXPECT_EQ(found.sessions, 2u);
}

TEST_F(Discover, AStaleOrDanglingSessionLatestIsNotedAndTheSessionsAreStillSearched) {
  const fs::path ray = dir_ / "ray";
  const std::string older = "session_2026-12-01_10-00-00_000001_11";
  const std::string newer = "session_2026-12-02_10-00-00_000001_12";
  report_at(ray / older / "logs" / "nsight" / "dtensor_policy_worker_2:4_1.nsys-rep");
  report_at(ray / newer / "logs" / "nsight" / "dtensor_policy_worker_2:4_2.nsys-rep");
  fs::create_directory_symlink(older, ray / "session_latest");
  const nsel::Discovery stale = nsel::discover_reports({ray});
  EXPECT_EQ(stale.reports.size(), 2u) << "a report reached through the link counts once";
  EXPECT_TRUE(has_note(stale, "stale_session_latest"));
  fs::remove(ray / "session_latest");
  fs::create_directory_symlink("session_2026-12-03_10-00-00_000001_13", ray / "session_latest");
  const nsel::Discovery dangling = nsel::discover_reports({ray});
  EXPECT_EQ(dangling.reports.size(), 2u);
  EXPECT_TRUE(has_note(dangling, "dangling_session_latest"));
}

TEST_F(Discover, TheStateOfEachFileIsToldFromNamesSizesAndTimes) {
  const fs::path nsight = dir_ / "plain";
  report_at(nsight / "dtensor_policy_worker_2:4_1.nsys-rep");
  // Too small to hold a profile.
  std::ofstream(nsight / "dtensor_policy_worker_2:4_2.nsys-rep") << "x";
  fs::last_write_time(nsight / "dtensor_policy_worker_2:4_2.nsys-rep",
                      fs::file_time_type::clock::now() - std::chrono::minutes(10));
  // Changed a moment ago: still being written.
  std::ofstream(nsight / "dtensor_policy_worker_2:4_3.nsys-rep") << std::string(8192, 'w');
  // Only the .qdstrm is left, long ago: nsel recover's work.
  std::ofstream(nsight / "dtensor_policy_worker_2:4_4.qdstrm") << std::string(8192, 'q');
  fs::last_write_time(nsight / "dtensor_policy_worker_2:4_4.qdstrm",
                      fs::file_time_type::clock::now() - std::chrono::minutes(10));
  const nsel::Discovery found = nsel::discover_reports({nsight});
  ASSERT_EQ(found.reports.size(), 4u);
  EXPECT_EQ(only(found, "dtensor_policy_worker_2:4_1.nsys-rep").state, nsel::ReportState::complete);
  const auto& empty = only(found, "dtensor_policy_worker_2:4_2.nsys-rep");
  EXPECT_EQ(empty.state, nsel::ReportState::empty);
  EXPECT_EQ(empty.reason, "1 bytes: too small to hold a profile");
  EXPECT_EQ(only(found, "dtensor_policy_worker_2:4_3.nsys-rep").state, nsel::ReportState::writing);
  const auto& left = only(found, "dtensor_policy_worker_2:4_4.qdstrm");
  EXPECT_EQ(left.state, nsel::ReportState::qdstrm);
  EXPECT_EQ(left.reason, "nsys did not import it; 'nsel recover' turns it into a report");
}

TEST_F(Discover, AMissingRootIsSkippedAndABadManifestIsANote) {
  const fs::path nsight = dir_ / "plain";
  report_at(nsight / "dtensor_policy_worker_2:4_1.nsys-rep");
  std::ofstream(nsight / "dtensor_policy_worker_2:4_9.nsel.json") << "{not json";
  const nsel::Discovery found = nsel::discover_reports({dir_ / "nowhere", nsight});
  EXPECT_EQ(found.roots, std::vector<std::string>{nsight.string()});
  EXPECT_TRUE(has_note(found, "bad_manifest"));
  EXPECT_EQ(only(found, "dtensor_policy_worker_2:4_1.nsys-rep").state, nsel::ReportState::complete);
}

// Whatever another user plants under a manifest's name (a FIFO without a writer, a link to
// /dev/zero, a sparse file of 2 GiB) is a noted bad manifest at once, and the rest is judged.
TEST_F(Discover, SpecialOrHugeFilesUnderManifestNamesAreNotedNeverHang) {
  const fs::path nsight = dir_ / "planted";
  report_at(nsight / "dtensor_policy_worker_2:4_1.nsys-rep");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  fs::create_symlink(dir_ / "fifo", nsight / "dtensor_policy_worker_2:4_2.nsel.json");
  ASSERT_EQ(::mkfifo((nsight / "dtensor_policy_worker_2:4_5.nsel.json").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", nsight / "dtensor_policy_worker_2:4_3.nsel.json");
  { std::ofstream huge(nsight / "dtensor_policy_worker_2:4_4.nsel.json"); }
  fs::resize_file(nsight / "dtensor_policy_worker_2:4_4.nsel.json", 2ull << 30);
  const auto started = std::chrono::steady_clock::now();
  const nsel::Discovery found = nsel::discover_reports({nsight});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  std::map<std::string, std::string> noted;
  for (const nsel::DiscoveryNote& n : found.notes) {
    if (n.kind == "bad_manifest") noted[fs::path(n.path).filename().string()] = n.message;
  }
  ASSERT_EQ(noted.size(), 3u);
  EXPECT_NE(
      noted["dtensor_policy_worker_2:4_2.nsel.json"].find("is not a regular file (a named pipe)"),
      std::string::npos);
  EXPECT_NE(noted["dtensor_policy_worker_2:4_3.nsel.json"].find(
                "is not a regular file (a character device)"),
            std::string::npos);
  EXPECT_NE(noted["dtensor_policy_worker_2:4_4.nsel.json"].find(
                "is larger than 1048576 bytes (2147483648)"),
            std::string::npos);
  EXPECT_TRUE(std::any_of(found.notes.begin(), found.notes.end(), [&](const auto& n) {
    return n.kind == "special_file" &&
           n.path == (nsight / "dtensor_policy_worker_2:4_5.nsel.json").string();
  }));
  EXPECT_EQ(only(found, "dtensor_policy_worker_2:4_1.nsys-rep").state, nsel::ReportState::complete);
}

TEST_F(Discover, ReportsDeeperThanTheDepthLimitAreNotSearched) {
  fs::path deep = dir_ / "deep";
  for (int i = 0; i < 4; ++i) deep /= "d" + std::to_string(i);
  report_at(deep / "dtensor_policy_worker_2:4_1.nsys-rep");
  nsel::DiscoveryOptions shallow;
  shallow.max_depth = 2;
  EXPECT_TRUE(nsel::discover_reports({dir_ / "deep"}, shallow).reports.empty());
  EXPECT_EQ(nsel::discover_reports({dir_ / "deep"}).reports.size(), 1u);
}
