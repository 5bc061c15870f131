// The naming of each window's report when one nsys session repeats the capture.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/reports/window_reports.hpp"

using nsel::StepWindow;

namespace {

struct ReportFolder {
  std::filesystem::path dir;
  ReportFolder() {
    static int count = 0;
    dir = std::filesystem::temp_directory_path() /
          ("nsel-window-reports-" + std::to_string(getpid()) + "-" + std::to_string(++count));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~ReportFolder() { std::filesystem::remove_all(dir); }
  void touch(const std::string& name, const std::string& content = "report") const {
    std::ofstream(dir / name) << content;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(dir / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      out.push_back(entry.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

nsel::RepeatedReports layout_in(const std::filesystem::path& dir) {
  return {dir.string(), "w_2:4,10:12,20:22_", ".nsel7"};
}

}  // namespace

TEST(WindowReports, ParsesOnlyItsOwnNumberedNames) {
  const nsel::RepeatedReports layout{"", "w_2:4,10:12_", ".nsel7"};
  const auto parsed = nsel::parse_numbered_report("w_2:4,10:12_315.nsel7.2.nsys-rep", layout);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->pid, 315);
  EXPECT_EQ(parsed->capture, 2u);
  for (const char* other : {"w_2:4,10:12_315.nsel8.2.nsys-rep", "w_2:4,10:12_315.nsel7.0.nsys-rep",
                            "w_2:4,10:12_315.nsel7.nsys-rep", "w_2:4,10:12_x.nsel7.1.nsys-rep",
                            "w_2:4_315.nsys-rep", "w_2:4,10:12_315.nsel7.1.qdstrm"}) {
    EXPECT_FALSE(nsel::parse_numbered_report(other, layout)) << other;
  }
}

TEST(WindowReports, EachReportTakesItsWindowsName) {
  ReportFolder folder;
  folder.touch("w_2:4,10:12,20:22_315.nsel7.1.nsys-rep", "first");
  folder.touch("w_2:4,10:12,20:22_315.nsel7.2.nsys-rep", "second");
  // Another launch of the same worker in the same folder: not ours, left alone.
  folder.touch("w_2:4,10:12,20:22_316.nsel8.1.nsys-rep");
  const auto named =
      nsel::name_window_reports(layout_in(folder.dir), "w", {{2, 4}, {10, 12}, {20, 22}});
  EXPECT_EQ(folder.names(), (std::vector<std::string>{"w_10:12_315.nsys-rep",
                                                      "w_2:4,10:12,20:22_316.nsel8.1.nsys-rep",
                                                      "w_2:4_315.nsys-rep"}));
  std::ifstream second(folder.dir / "w_10:12_315.nsys-rep");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(second), {}), "second");
  ASSERT_EQ(named.reports.size(), 3u);
  EXPECT_EQ(named.reports[0].path, folder.dir / "w_2:4_315.nsys-rep");
  EXPECT_EQ(named.reports[2].window, (StepWindow{20, 22}));
  EXPECT_FALSE(named.reports[2].path);
  EXPECT_EQ(named.messages,
            (std::vector<std::string>{
                "nsel: report of window 2:4: " + (folder.dir / "w_2:4_315.nsys-rep").string(),
                "nsel: report of window 10:12: " + (folder.dir / "w_10:12_315.nsys-rep").string(),
                "nsel: worker 'w' (process 315) never reached window 20:22 (the program ended "
                "first); no report for it"}));
}

TEST(WindowReports, NeverOverwritesAndSaysWhenNothingCame) {
  ReportFolder folder;
  folder.touch("w_2:4_315.nsys-rep", "older");
  folder.touch("w_2:4,10:12,20:22_315.nsel7.1.nsys-rep", "newer");
  const auto named =
      nsel::name_window_reports(layout_in(folder.dir), "w", {{2, 4}, {10, 12}, {20, 22}});
  EXPECT_EQ(named.reports[0].path, folder.dir / "w_2:4_315-2.nsys-rep");
  EXPECT_EQ(named.messages.at(0),
            "nsel: warning: " + nsel::quote((folder.dir / "w_2:4_315.nsys-rep").string()) +
                " is taken by another capture; the report of window 2:4 is " +
                nsel::quote((folder.dir / "w_2:4_315-2.nsys-rep").string()));
  EXPECT_EQ(folder.read("w_2:4_315.nsys-rep"), "older");
  EXPECT_EQ(folder.read("w_2:4_315-2.nsys-rep"), "newer");

  // A manifest alone takes the name too (a capture an earlier run lost): never written over.
  ReportFolder lost;
  lost.touch("w_2:4_315.nsel.json", "an earlier run's manifest");
  lost.touch("w_2:4_315-2.qdstrm", "an earlier run's capture");
  lost.touch("w_2:4,10:12,20:22_315.nsel7.1.nsys-rep", "newer");
  const auto named_lost =
      nsel::name_window_reports(layout_in(lost.dir), "w", {{2, 4}, {10, 12}, {20, 22}});
  EXPECT_EQ(named_lost.reports[0].path, lost.dir / "w_2:4_315-3.nsys-rep");
  EXPECT_EQ(lost.read("w_2:4_315.nsel.json"), "an earlier run's manifest");

  ReportFolder empty;
  const auto none =
      nsel::name_window_reports(layout_in(empty.dir), "w", {{2, 4}, {10, 12}, {20, 22}});
  EXPECT_TRUE(none.reports.empty());
  EXPECT_EQ(none.messages,
            (std::vector<std::string>{"nsel: worker 'w' left no report: none of its windows "
                                      "2:4,10:12,20:22 was reached before the program ended, or "
                                      "nsys failed"}));
}
