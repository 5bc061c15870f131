// Where the manifest recorder looks for the report nsys writes, and the manifest beside it; how
// it claims the report's name and moves its manifest there.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "nsel/core/manifest.hpp"
#include "nsel/launch/manifest_recorder.hpp"
#include "sample_manifest.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& label) {
  const fs::path dir =
      fs::temp_directory_path() / ("nsel-recorder-" + label + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

nsel::Manifest sample_manifest() {
  nsel::Manifest m = nsel::test::window_manifest();
  // Its own process as nsel's: it has no child, so the program's pid comes from the files.
  m.nsel_pid = ::getpid();
  return m;
}

}  // namespace

TEST(Manifest, ReportPathFollowsNsysExpansion) {
  EXPECT_EQ(nsel::expand_report_path("w_2:4_%p", 42, "/work"), "/work/w_2:4_42.nsys-rep");
  EXPECT_EQ(nsel::expand_report_path("/abs/r%%_%p.nsys-rep", 7, "/work"), "/abs/r%_7.nsys-rep");
  EXPECT_EQ(nsel::manifest_path_for("/a/w_2:4_42.nsys-rep"), "/a/w_2:4_42.nsel.json");
}

// Two processes with one pid (two PID namespaces, or an old run) in one folder: the second
// capture gets "<stem>-2" and its own manifest; the first's report and manifest stay as they were.
TEST(ManifestRecorder, ATakenReportNameGoesToTheNextVariantAndLeavesTheOldOneAlone) {
  const fs::path dir = fresh_dir("taken");
  std::ofstream(dir / "w_2:4_4242.nsys-rep") << "old report";
  std::ofstream(dir / "w_2:4_4242.nsel.json") << "old manifest";
  {
    nsel::ManifestRecorder recorder(sample_manifest(), (dir / ".w_2:4_%p.nselX").string(),
                                    (dir / "w_2:4_%p").string());
    // What nsys writes under the hidden name of this launch.
    std::ofstream(dir / ".w_2:4_4242.nselX.nsys-rep") << "new report";
    EXPECT_EQ(recorder.finish(0), "complete");
  }
  EXPECT_EQ(slurp(dir / "w_2:4_4242.nsys-rep"), "old report");
  EXPECT_EQ(slurp(dir / "w_2:4_4242.nsel.json"), "old manifest");
  EXPECT_EQ(slurp(dir / "w_2:4_4242-2.nsys-rep"), "new report");
  const nsel::Manifest m = nsel::parse_manifest(slurp(dir / "w_2:4_4242-2.nsel.json"), "m");
  EXPECT_EQ(m.pid, 4242);
  EXPECT_EQ(m.state, "complete");
  EXPECT_EQ(m.report, (dir / "w_2:4_4242-2.nsys-rep").string());
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"w_2:4_4242-2.nsel.json", "w_2:4_4242-2.nsys-rep",
                                             "w_2:4_4242.nsel.json", "w_2:4_4242.nsys-rep"}));
  fs::remove_all(dir);
}

// The pending manifest becomes the report's in one rename: no moment of the folder holds both
// (a SLURM job's end under load once found both, and counted the process twice).
TEST(ManifestRecorder, ThePendingManifestMovesToItsFinalNameInOneRename) {
  const fs::path dir = fresh_dir("move");
  const int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(
      inotify_add_watch(watch, dir.c_str(), IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE),
      0);
  std::string pending;
  {
    nsel::ManifestRecorder recorder(sample_manifest(), (dir / "w_2:4_%p").string());
    pending = recorder.path().filename().string();
    std::ofstream(dir / "w_2:4_77.nsys-rep") << "report";
    EXPECT_EQ(recorder.finish(0), "complete");
    EXPECT_EQ(recorder.path(), dir / "w_2:4_77.nsel.json");
  }
  ASSERT_TRUE(pending.starts_with(".w-pending-" + std::to_string(::getpid()) + "-")) << pending;
  // Every event on the two names, in order.
  std::vector<std::string> events;
  std::vector<char> buffer(64 * 1024);
  const ssize_t n = read(watch, buffer.data(), buffer.size());
  for (ssize_t at = 0; at < n;) {
    const auto* event = reinterpret_cast<const inotify_event*>(buffer.data() + at);
    const std::string name = event->len > 0 ? event->name : "";
    if (name == pending || name == "w_2:4_77.nsel.json") {
      const char* what = (event->mask & IN_MOVED_FROM) ? "moved from "
                         : (event->mask & IN_MOVED_TO) ? "moved to "
                         : (event->mask & IN_DELETE)   ? "deleted "
                                                       : "created ";
      events.push_back(what + name +
                       (event->mask & (IN_MOVED_FROM | IN_MOVED_TO)
                            ? " #" + std::to_string(event->cookie)
                            : ""));
    }
    at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
  }
  close(watch);
  // The pending name is only ever written (moved onto from its temporary file) until it is
  // moved to the final name in one rename (one cookie); never deleted, and the final name is
  // never written while the pending one is there.
  const std::string final_name = "w_2:4_77.nsel.json";
  size_t first_final = 0;
  while (first_final < events.size() && events[first_final].find(final_name) == std::string::npos) {
    ++first_final;
  }
  ASSERT_GT(first_final, 0u) << "the pending manifest came first";
  ASSERT_LT(first_final, events.size()) << "the final manifest appeared";
  const std::string& from = events[first_final - 1];
  const std::string& to = events[first_final];
  ASSERT_TRUE(from.starts_with("moved from " + pending + " #")) << from;
  ASSERT_TRUE(to.starts_with("moved to " + final_name + " #")) << to;
  EXPECT_EQ(from.substr(from.find('#')), to.substr(to.find('#')));
  for (size_t i = 0; i + 1 < first_final; ++i) {
    EXPECT_TRUE(events[i].starts_with("moved to " + pending)) << events[i];
  }
  for (size_t i = first_final; i < events.size(); ++i) {
    EXPECT_EQ(events[i].find(pending), std::string::npos) << events[i];
  }
  fs::remove_all(dir);
}
