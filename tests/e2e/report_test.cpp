// `nsel report` end to end on reports made here by real nsys (NVTX and OS runtime, no GPU):
// golden comparisons with `nsys stats` and with the exports themselves, the export cache, bad
// input, broken reports, and the HTML page rendered by a real headless browser.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "nsel/launch/nsys_agents.hpp"
#include "nsel/sys/nsys_installs.hpp"
#include "nsel/sys/process.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using nsel::test::run;

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kWorkload = NSEL_WORKLOAD_BINARY;

// Three processes of a training-shaped job; the second policy worker is slow in step 3.
struct Fixture {
  fs::path dir;
  std::vector<fs::path> reports;
  std::string slow_label;
};
Fixture* fixture = nullptr;

class ReportEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    fixture = new Fixture;
    fixture->dir = nsel::test::make_temp_dir("report");
    const std::vector<std::pair<std::string, std::string>> workers = {
        {"dtensor_policy_worker", "0"},
        {"dtensor_policy_worker", "3"},
        {"vllm_generation_worker", "0"}};
    for (const auto& [worker, slow_step] : workers) {
      // nsys 2022.4 here now and then exits 0 without writing the report (its agent lost):
      // try again, twice at most, and say what happened.
      fs::path newest;
      std::string diagnostics;
      for (int attempt = 0; attempt < 3 && newest.empty(); ++attempt) {
        const auto r =
            run({"nsys", "profile", "-t", "nvtx,osrt", "-s", "none", "--cpuctxsw=none", "-o",
                 (fixture->dir / (worker + "_1:5_%p")).string(), kWorkload, "--steps", "4",
                 "--ranges", "40", "--work-us", "4000", "--slow-step", slow_step},
                {});
        // An agent that outlives its session spins a core for minutes: end it.
        nsel::stop_nsys_agents(
            r.pid, std::filesystem::file_time_type::clock::now() - std::chrono::minutes(10));
        diagnostics += "exit " + std::to_string(r.exit_code) + ": " + r.out + r.err + "\n";
        // The report not seen before is this run's.
        for (const fs::path& f : nsel::test::files_in(fixture->dir)) {
          if (f.extension() != ".nsys-rep") continue;
          if (std::find(fixture->reports.begin(), fixture->reports.end(), f) ==
              fixture->reports.end()) {
            newest = f;
          }
        }
      }
      ASSERT_FALSE(newest.empty()) << diagnostics;
      fixture->reports.push_back(newest);
      if (slow_step == "3") {
        const std::string stem = newest.stem().string();
        fixture->slow_label = worker + "/" + stem.substr(stem.rfind('_') + 1);
      }
    }
  }
  void TearDown() override {
    if (fixture != nullptr) fs::remove_all(fixture->dir);
    delete fixture;
  }
};
const auto* const environment = ::testing::AddGlobalTestEnvironment(new ReportEnvironment);

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, separator)) cells.push_back(cell);
  if (!line.empty() && line.back() == separator) cells.emplace_back();
  return cells;
}

std::string one_decimal(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

// The rows `nsys stats -r <report> -f csv` prints for an export, keyed by name (last column).
std::map<std::string, std::vector<std::string>> nsys_stats(const std::string& report,
                                                           const fs::path& export_file) {
  const auto r = run({"nsys", "stats", "-r", report, "-f", "csv", export_file.string()}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::vector<std::string>> rows;
  std::istringstream in(r.out);
  std::string line;
  bool header_seen = false;
  while (std::getline(in, line)) {
    if (line.rfind("Time (%)", 0) == 0) {
      header_seen = true;
      continue;
    }
    if (!header_seen || line.empty()) continue;
    const auto cells = split(line, ',');
    // Names may hold commas: the first eight cells are numbers, the rest is the name.
    std::string name;
    for (std::size_t i = 8; i < cells.size(); ++i) name += (i > 8 ? "," : "") + cells[i];
    if (name.size() >= 2 && name.front() == '"') name = name.substr(1, name.size() - 2);
    rows[name] = std::vector<std::string>(cells.begin(), cells.begin() + 8);
  }
  EXPECT_TRUE(header_seen) << r.out << r.err;
  return rows;
}

std::vector<std::string> nsel_cells(const json& row) {
  return {one_decimal(row["time_percent"].get<double>()),
          std::to_string(row["total_ns"].get<long long>()),
          std::to_string(row["instances"].get<long long>()),
          one_decimal(row["avg_ns"].get<double>()),
          one_decimal(row["median_ns"].get<double>()),
          std::to_string(row["min_ns"].get<long long>()),
          std::to_string(row["max_ns"].get<long long>()),
          one_decimal(row["stddev_ns"].get<double>())};
}

json report_json(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {kNsel, "report", "--json", "-q"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const auto r = run(argv, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

// (name, start, end) of every NVTX range named "step <n>", straight from the export.
std::vector<std::tuple<long long, long long, long long>> exported_step_ranges(const fs::path& db) {
  std::vector<std::tuple<long long, long long, long long>> out;
  sqlite3* handle = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(handle,
                     "SELECT COALESCE(e.text, s.value), e.start, e.end FROM NVTX_EVENTS e LEFT "
                     "JOIN StringIds s ON e.textId = s.id ORDER BY e.start",
                     -1, &s, nullptr);
  while (sqlite3_step(s) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    const std::string name = text ? text : "";
    if (!std::regex_match(name, std::regex("step [0-9]+"))) continue;
    out.emplace_back(std::stoll(name.substr(5)), sqlite3_column_int64(s, 1),
                     sqlite3_column_int64(s, 2));
  }
  sqlite3_finalize(s);
  sqlite3_close(handle);
  return out;
}

fs::path copy_of_reports(const std::string& label, std::size_t count) {
  const fs::path dir = nsel::test::make_temp_dir(label);
  for (std::size_t i = 0; i < count; ++i) {
    fs::copy_file(fixture->reports[i], dir / fixture->reports[i].filename());
  }
  return dir;
}

}  // namespace

TEST(Report, NvtxAndOsRuntimeSummariesEqualNsysStatsNumberForNumber) {
  const json out = report_json({fixture->dir.string()});
  ASSERT_EQ(out["processes"].size(), 3u);
  for (const json& p : out["processes"]) {
    const fs::path export_file = p["export"].get<std::string>();
    ASSERT_TRUE(fs::exists(export_file));
    // The report names of the nsys on PATH, which made these reports and exports.
    const auto version =
        nsel::ask_nsys_version(nsel::resolve_program("nsys", std::getenv("PATH"), "nsys"));
    ASSERT_TRUE(version);
    const nsel::NsysBehaviour names = nsel::nsys_behaviour(*version);
    for (const auto& [table, ours] :
         {std::pair<std::string, json>{names.nvtx_pushpop_report, p["nvtx"]},
          {names.osrt_report, p["osrt"]}}) {
      const auto theirs = nsys_stats(table, export_file);
      ASSERT_EQ(ours.size(), theirs.size()) << table << " " << p["label"];
      ASSERT_GT(theirs.size(), 3u);
      for (const json& row : ours) {
        const std::string name = row["name"];
        ASSERT_TRUE(theirs.count(name)) << table << ": " << name;
        EXPECT_EQ(nsel_cells(row), theirs.at(name)) << table << ": " << name;
      }
    }
    // The ranges of the named NVTX domain carry its name, as nvtxppsum shows them.
    bool domain_row = false;
    for (const json& row : p["nvtx"]) domain_row |= row["name"] == "nsel_io:checkpoint";
    EXPECT_TRUE(domain_row);
  }
}

TEST(Report, StepDurationsAreTheNvtxStepRangesOfTheExport) {
  const json out = report_json({fixture->dir.string()});
  for (const json& p : out["processes"]) {
    const auto ranges = exported_step_ranges(p["export"].get<std::string>());
    ASSERT_EQ(ranges.size(), 4u);
    ASSERT_EQ(p["steps"].size(), ranges.size());
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      const json& step = p["steps"][i];
      EXPECT_EQ(step["step"], std::get<0>(ranges[i]));
      EXPECT_EQ(step["start_ns"], std::get<1>(ranges[i]));
      EXPECT_EQ(step["end_ns"], std::get<2>(ranges[i]));
      EXPECT_EQ(step["duration_ns"], std::get<2>(ranges[i]) - std::get<1>(ranges[i]));
      EXPECT_TRUE(step["gpu_busy_ns"].is_null());  // no GPU data in these reports
      // Top-level ranges: the three phases, never their nested ranges or the loader thread's.
      std::vector<std::string> names;
      long long inside = 0;
      for (const json& share : step["top_level_ranges"]) {
        names.push_back(share["range"]);
        inside += share["ns"].get<long long>();
      }
      EXPECT_EQ(names, (std::vector<std::string>{"forward", "backward", "optimizer"}));
      EXPECT_LE(inside, step["duration_ns"].get<long long>());
      EXPECT_GT(inside, step["duration_ns"].get<long long>() * 9 / 10);
    }
    EXPECT_EQ(p["step_range"], "1:5");
    EXPECT_TRUE(p["has_nvtx"]);
    EXPECT_TRUE(p["has_osrt"]);
    EXPECT_FALSE(p["has_gpu"]);
  }
}

TEST(Report, SlowWorkerIsTheStragglerOfItsSlowStep) {
  const json out = report_json({fixture->dir.string(), "--straggler-percent", "25"});
  ASSERT_EQ(out["steps"].size(), 4u);
  const json& step3 = out["steps"][2];
  EXPECT_EQ(step3["step"], 3);
  EXPECT_EQ(step3["slowest"], fixture->slow_label);
  // Its step 3 is about 3.5 times the others' (a busy machine may slow the others too).
  const auto& stragglers = step3["stragglers"];
  EXPECT_NE(std::find(stragglers.begin(), stragglers.end(), fixture->slow_label), stragglers.end())
      << step3.dump();
  EXPECT_EQ(step3["duration_ns"].size(), 3u);
  EXPECT_EQ(out["straggler_percent"], 25.0);
}

TEST(Report, TerminalTablesAndCsvFiles) {
  const fs::path csv = nsel::test::make_temp_dir("report-csv") / "tables";
  const auto r = run({kNsel, "report", "--csv", csv.string(), fixture->dir.string()}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nsel report: 3 processes\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Step time by worker (ms)"), std::string::npos);
  EXPECT_NE(
      r.out.find("Stragglers (more than 10.0 % above the median of the other workers' step time)"),
      std::string::npos);
  EXPECT_NE(r.out.find("  " + fixture->slow_label + "\n"), std::string::npos);
  EXPECT_NE(r.out.find("CUDA kernels: no GPU data"), std::string::npos);
  EXPECT_NE(r.err.find("nsel report: wrote CSV files to " + csv.string()), std::string::npos);
  for (const char* name :
       {"processes.csv", "steps.csv", "step_by_worker.csv", "stragglers.csv", "step_ranges.csv",
        "nvtx.csv", "kernels.csv", "osrt.csv", "failures.csv"}) {
    EXPECT_TRUE(fs::exists(csv / name)) << name;
  }
  std::ifstream steps(csv / "steps.csv");
  std::string line;
  int lines = 0;
  while (std::getline(steps, line)) ++lines;
  EXPECT_EQ(lines, 1 + 3 * 4);
  std::ifstream by_worker(csv / "step_by_worker.csv");
  std::getline(by_worker, line);
  EXPECT_EQ(split(line, ',').size(), 1u + 3u + 2u) << line;
  fs::remove_all(csv.parent_path());
}

TEST(Report, ExportsOnceAndAgainOnlyWhenTheReportIsNewer) {
  const fs::path dir = copy_of_reports("report-cache", 1);
  const fs::path report = nsel::test::files_in(dir).front();
  const auto first = run({kNsel, "report", dir.string()}, {});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("nsel report: exporting " + report.string()), std::string::npos);
  // <stem>.nsel.sqlite where nsys exports chosen tables (2023.4 first on PATH), else <stem>.sqlite.
  fs::path export_file = fs::path(report).replace_extension(".nsel.sqlite");
  if (!fs::exists(export_file)) export_file = fs::path(report).replace_extension(".sqlite");
  ASSERT_TRUE(fs::exists(export_file));
  const auto made = fs::last_write_time(export_file);

  const auto second = run({kNsel, "report", dir.string()}, {});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err.find("exporting"), std::string::npos) << second.err;
  EXPECT_EQ(fs::last_write_time(export_file), made);

  // Times alone say nothing: an export older than its report is still the report's while the
  // report's fingerprint (size, first and last MiB) is the one its sidecar recorded.
  fs::last_write_time(export_file, fs::last_write_time(report) - std::chrono::seconds(5));
  const auto third = run({kNsel, "report", dir.string()}, {});
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(third.err.find("exporting"), std::string::npos) << third.err;

  // Another report under the same name, its time kept (cp -p): exported again.
  const fs::path other = copy_of_reports("report-cache-other", 2);
  fs::path replacement;
  for (const fs::path& file : nsel::test::files_in(other)) {
    if (file.filename() != report.filename()) replacement = file;
  }
  ASSERT_FALSE(replacement.empty());
  const auto time = fs::last_write_time(report);
  fs::copy_file(replacement, report, fs::copy_options::overwrite_existing);
  fs::last_write_time(report, time);
  const auto fourth = run({kNsel, "report", dir.string()}, {});
  ASSERT_EQ(fourth.exit_code, 0) << fourth.err;
  EXPECT_NE(fourth.err.find("exporting"), std::string::npos) << fourth.err;
  // The report, its export and the export's fingerprint: no temporary file left behind.
  EXPECT_EQ(nsel::test::files_in(dir).size(), 3u);
  fs::remove_all(dir);
  fs::remove_all(other);
}

TEST(Report, ReadOnlyFolderExportsIntoTheCacheFolder) {
  const fs::path dir = copy_of_reports("report-readonly", 1);
  const fs::path cache = nsel::test::make_temp_dir("report-cachedir");
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  // The cache is private to its user: theirs, and writable by no one else.
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(cache.c_str(), 65534, 65534), 0);
  }
  ASSERT_EQ(::chmod(cache.c_str(), 0700), 0);
  // root writes anywhere: run as an unprivileged user to make the folder read-only for nsel.
  std::vector<std::string> argv = {kNsel,         "report",       "--json",    "-q",
                                   "--cache-dir", cache.string(), dir.string()};
  if (::geteuid() == 0) {
    argv.insert(argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  }
  const auto r = run(argv, {{"HOME", cache.string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  const fs::path export_file = out["processes"][0]["export"].get<std::string>();
  EXPECT_EQ(export_file.parent_path(), cache);
  EXPECT_TRUE(fs::exists(export_file));
  EXPECT_EQ(nsel::test::files_in(dir).size(), 1u);
  ::chmod(dir.c_str(), 0755);
  fs::remove_all(dir);
  fs::remove_all(cache);
}

TEST(Report, EmptyAndNonReportsGetOneLineEachWhileOthersAreSummarised) {
  const fs::path dir = copy_of_reports("report-broken", 2);
  std::ofstream(dir / "dtensor_policy_worker_1:5_1.nsys-rep");  // empty: nsys was killed
  std::ofstream(dir / "dtensor_policy_worker_1:5_2.nsys-rep") << "this is not a report\n";
  std::ofstream(dir / "worker_process_3.sqlite") << "nor is this an export\n";
  const auto r = run({kNsel, "report", "-q", "--json", dir.string()}, {});
  EXPECT_EQ(r.exit_code, 1);
  const std::string d = dir.string();
  // The nsys that tried is named by its version: the one on PATH.
  const auto version =
      nsel::ask_nsys_version(nsel::resolve_program("nsys", std::getenv("PATH"), "nsys"));
  ASSERT_TRUE(version);
  // nsys's own words are kept beside the report that failed; their last line is in the error.
  std::ifstream log(dir / "dtensor_policy_worker_1:5_2.nsys-export.log");
  std::string nsys_said;
  for (std::string line; std::getline(log, line);) {
    if (!line.empty()) nsys_said = line;
  }
  EXPECT_EQ(nsys_said.rfind("Exportation error: ", 0), 0u) << nsys_said;
  EXPECT_EQ(r.err,
            "nsel: '" + d +
                "/dtensor_policy_worker_1:5_1.nsys-rep': empty report (0 bytes): the process "
                "ended before nsys finished writing it\n"
                "nsel: '" +
                d +
                "/dtensor_policy_worker_1:5_2.nsys-rep': not a readable Nsight Systems report "
                "(nsys " +
                version->text + " export exited with 1: '" + nsys_said + "'; its output: '" + d +
                "/dtensor_policy_worker_1:5_2.nsys-export.log')\n"
                "nsel: '" +
                d + "/worker_process_3.sqlite': not a SQLite export (file is not a database)\n")
      << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["processes"].size(), 2u);
  EXPECT_EQ(out["failures"].size(), 3u);
  // Nothing half-written: no export of the broken reports.
  for (const fs::path& f : nsel::test::files_in(dir)) {
    EXPECT_EQ(f.filename().string().find(".tmp-"), std::string::npos) << f;
    EXPECT_EQ(f.string().find(".nsel-tmp-"), std::string::npos) << f;
  }
  fs::remove_all(dir);
}

TEST(Report, NsysOwnOutputIsShownWithVerboseAndItsFailureLogGoesOnceTheExportWorks) {
  const fs::path dir = copy_of_reports("report-nsys-output", 1);
  const fs::path report = nsel::test::files_in(dir).front();
  const fs::path log = dir / (report.stem().string() + ".nsys-export.log");
  std::ofstream(log) << "Exportation error: an earlier failure\n";
  const auto quiet = run({kNsel, "report", "-q", dir.string()}, {});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out.find("events: ["), std::string::npos) << quiet.out;
  EXPECT_EQ(quiet.err.find("events: ["), std::string::npos) << quiet.err;
  EXPECT_FALSE(fs::exists(log)) << "the failure's log outlived a working export";

  for (const fs::path& f : nsel::test::files_in(dir)) {
    if (f.extension() == ".sqlite") fs::remove(f);
  }
  const auto verbose = run({kNsel, "report", "-v", "-q", dir.string()}, {});
  ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
  EXPECT_NE(verbose.err.find("nsel report: nsys export of " + report.string() + " said:\n  "),
            std::string::npos)
      << verbose.err;
  // The progress bar as it ended, not each redraw of it.
  EXPECT_NE(verbose.err.find("100%]\n"), std::string::npos) << verbose.err;
  EXPECT_EQ(verbose.err.find('\r'), std::string::npos) << verbose.err;
  EXPECT_EQ(verbose.out.find("events: ["), std::string::npos) << verbose.out;
  fs::remove_all(dir);
}

TEST(Report, BadOptionsAreOneLineWithExitCodeTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--step-name", "iteration"},
       "nsel: error: --step-name='iteration': the step number's place \"{n}\" must appear once; "
       "expected an NVTX range name with {n} where the step number goes, for example 'step {n}' "
       "or 'train_step_{n}'\n"},
      {{"--straggler-percent", "-5"},
       "nsel: error: --straggler-percent='-5': not a percentage; expected a number >= 0, for "
       "example 10 (10 % above the median of the other workers' step time)\n"},
      {{"--top", "-5"},
       "nsel: error: --top='-5': out of range; expected a whole number from 0 to 1000000\n"},
      {{"--top", "ten"},
       "nsel: error: --top='ten': not a whole number; expected a whole number from 0 to "
       "1000000\n"},
      {{"--jobs", "0"},
       "nsel: error: --jobs='0': out of range; expected a whole number from 1 to 1024\n"},
      {{"/nonexistent/reports"},
       "nsel: error: PATH='/nonexistent/reports': no such file or folder; expected a report "
       "(.nsys-rep), an export (.sqlite) or a folder holding them\n"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {kNsel, "report"};
    argv.insert(argv.end(), args.begin(), args.end());
    if (args.front().rfind("--", 0) == 0) argv.push_back(fixture->dir.string());
    const auto r = run(argv, {});
    EXPECT_EQ(r.exit_code, 2) << args.front();
    EXPECT_EQ(r.err, message);
    EXPECT_EQ(r.out, "");
  }
  const fs::path empty = nsel::test::make_temp_dir("report-none");
  const auto none = run({kNsel, "report", empty.string()}, {});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err, "nsel: error: no reports (.nsys-rep) or exports (.sqlite) found under '" +
                          empty.string() + "'\n");
  fs::remove_all(empty);
}

// What headless Chromium laid out, read from the DOM it dumps once the page's script has drawn
// the timeline: the step bars and GPU strips that got a size, the box of every step header,
// the legend, the worker labels, and the widths of the timeline's box and of the page.
struct DrawnPage {
  std::string dom;
  std::map<std::pair<std::string, int>, double> bars;    // (worker, step): width drawn
  std::map<std::pair<std::string, int>, double> strips;  // (worker, step): GPU busy width drawn
  std::map<std::pair<std::string, int>, double> comms;   // (worker, step): communication width
  std::vector<std::pair<double, double>> headers;        // left and right, in page order
  std::vector<std::string> legend;                       // entries as written
  std::map<std::string, bool> labels;                    // full label (tooltip): cut short?
  double svg_width = 0;
  long long box_scroll_width = 0, box_width = 0, page_width = 0, window_width = 0;
};

std::string attribute(const std::string& tag, const std::string& name) {
  const std::regex pattern(" " + name + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(tag, m, pattern) ? m[1].str() : std::string();
}

std::vector<std::string> tags(const std::string& dom, const std::string& start) {
  std::vector<std::string> out;
  for (std::size_t at = dom.find(start); at != std::string::npos; at = dom.find(start, at + 1)) {
    out.push_back(dom.substr(at, dom.find('>', at) - at + 1));
  }
  return out;
}

DrawnPage draw_in_chromium(const fs::path& page, const std::string& window_size,
                           const std::string& fragment, const fs::path& profile) {
  const auto browser = run({"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                            "--user-data-dir=" + profile.string(), "--window-size=" + window_size,
                            "--dump-dom", "file://" + page.string() + fragment},
                           {});
  EXPECT_EQ(browser.exit_code, 0) << "Debian's chromium is needed (scripts/setup.d): "
                                  << browser.err;
  DrawnPage d;
  d.dom = browser.out;
  for (const std::string& t : tags(d.dom, "<rect class=\"stepbar\"")) {
    if (attribute(t, "data-drawn") != "yes") continue;
    d.bars[{attribute(t, "data-worker"), std::stoi(attribute(t, "data-step"))}] =
        std::stod(attribute(t, "width"));
  }
  for (const std::string& t : tags(d.dom, "<rect class=\"busy\" data-worker=")) {
    if (attribute(t, "data-drawn") != "yes") continue;
    d.strips[{attribute(t, "data-worker"), std::stoi(attribute(t, "data-step"))}] =
        std::stod(attribute(t, "width"));
  }
  for (const std::string& t : tags(d.dom, "<rect class=\"comm\" data-worker=")) {
    if (attribute(t, "data-drawn") != "yes") continue;
    d.comms[{attribute(t, "data-worker"), std::stoi(attribute(t, "data-step"))}] =
        std::stod(attribute(t, "width"));
  }
  for (const std::string& t : tags(d.dom, "<text class=\"stephead\"")) {
    std::istringstream box(attribute(t, "data-box"));
    double left = 0, right = 0;
    box >> left >> right;
    d.headers.emplace_back(left, right);
  }
  const std::regex entry(
      "<span class=\"entry[^\"]*\" title=\"[^\"]*\"><i [^>]*></i>([^<]*)</span>");
  for (auto it = std::sregex_iterator(d.dom.begin(), d.dom.end(), entry);
       it != std::sregex_iterator(); ++it) {
    d.legend.push_back((*it)[1]);
  }
  for (const std::string& t : tags(d.dom, "<div class=\"wl\" title=")) {
    d.labels[attribute(t, "title")] = attribute(t, "data-cut") == "yes";
  }
  for (const std::string& t : tags(d.dom, "<svg id=\"plot\"")) {
    d.svg_width = std::stod(attribute(t, "width"));
  }
  std::istringstream box(attribute(tags(d.dom, "<div class=\"tl-scroll\"").at(0), "data-widths"));
  box >> d.box_scroll_width >> d.box_width;
  std::istringstream body(attribute(tags(d.dom, "<body").at(0), "data-page"));
  body >> d.page_width >> d.window_width;
  return d;
}

// No two step headers the browser laid out overlap (they are drawn left to right).
void expect_headers_apart(const DrawnPage& d, const std::string& where) {
  ASSERT_FALSE(d.headers.empty()) << where;
  for (std::size_t i = 1; i < d.headers.size(); ++i) {
    EXPECT_LT(d.headers[i - 1].second, d.headers[i].first)
        << where << ": step headers " << i - 1 << " and " << i << " overlap";
  }
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Report, HtmlPageDrawsEveryWorkerAndStepInHeadlessChromium) {
  const fs::path dir = nsel::test::make_temp_dir("report-html");
  const fs::path page = dir / "report.html";
  const auto r = run({kNsel, "report", "-q", "--html", page.string(), fixture->dir.string()}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_file(page);
  // Self-contained: nothing is fetched from anywhere.
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);

  const DrawnPage d = draw_in_chromium(page, "1280,900", "", dir / "profile");
  const json out = report_json({fixture->dir.string()});
  std::set<std::pair<std::string, int>> expected;
  std::map<std::string, long long> range_totals;
  for (const json& p : out["processes"]) {
    for (const json& s : p["steps"]) {
      expected.emplace(p["name"], s["step"].get<int>());
      for (const json& t : s["top_level_ranges"])
        range_totals[t["range"]] += t["ns"].get<long long>();
    }
    // The worker's name (as the text names it) is beside its bars, whole in its tooltip.
    EXPECT_EQ(d.labels.count(p["name"].get<std::string>()), 1u) << p["name"];
  }
  // Every (worker, step) bar laid out by the browser with a real size.
  std::string counts;
  for (const json& p : out["processes"]) {
    counts += p["label"].get<std::string>() + ": " + std::to_string(p["steps"].size()) + " steps; ";
  }
  EXPECT_EQ(expected.size(), 12u) << counts;
  std::set<std::pair<std::string, int>> drawn;
  for (const auto& [key, width] : d.bars) drawn.insert(key);
  EXPECT_EQ(drawn, expected);
  EXPECT_NE(d.dom.find("data-drawn-bars=\"12\""), std::string::npos);
  expect_headers_apart(d, "1280x900");
  // The legend: each top-level range name once, the longest in total first; no GPU, no strips.
  std::vector<std::pair<std::string, long long>> order(range_totals.begin(), range_totals.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> legend;
  for (const auto& [name, total] : order) legend.push_back(name);
  EXPECT_EQ(d.legend, legend);
  EXPECT_TRUE(d.strips.empty());
  EXPECT_EQ(html.find("GPU per step"), std::string::npos);
  fs::remove_all(dir);
}

// 16 processes of 59 steps each, made of the real 4-GPU DDP captures (A100, NCCL), under 16
// names: every bar and GPU strip drawn, strips as long as the GPU was busy and communicated,
// headers apart at two window sizes and zoomed in, long labels cut but whole in their tooltips, a
// legend of three grouped names, and the per-step GPU medians equal to those of the processes' own
// numbers.
TEST(Report, HtmlPageOfSixteenRealProcessesOf59StepsStaysReadable) {
  const fs::path captures = fs::path(NSEL_SOURCE_DIR) / "../shared/gpu-reports/nersc-sc22-ddp";
  if (!fs::exists(captures / "exports")) {
    GTEST_SKIP() << "the real GPU captures are not here: " << captures;
  }
  const fs::path dir = nsel::test::make_temp_dir("report-html-sc22");
  // The exports unpacked here, never beside the shared originals.
  const std::vector<std::string> runs = {"4gpu_baseline", "4gpu_nobroadcast",
                                         "4gpu_bucketcap100mb"};
  for (const std::string& name : runs) {
    const auto xz = run({"sh", "-c", "xz -dkc \"$0\" > \"$1\"",
                         (captures / "exports" / (name + ".nsys2022.4.sqlite.xz")).string(),
                         (dir / (name + ".sqlite")).string()},
                        {});
    ASSERT_EQ(xz.exit_code, 0) << xz.err;
  }
  // 16 processes (12 policy workers, 4 with a name too long for the label column), each one
  // of the three runs under a file name of its own (hard links: one copy on disk each).
  const fs::path set = dir / "set";
  fs::create_directories(set);
  for (int i = 0; i < 16; ++i) {
    const std::string worker = i < 12 ? "dtensor_policy_worker" : "vllm_async_generation_worker";
    fs::create_hard_link(dir / (runs[i % 3] + ".sqlite"),
                         set / (worker + "_1:60_" + std::to_string(41000 + i) + ".sqlite"));
  }
  const fs::path page = dir / "report.html";
  const auto r = run({kNsel, "report", "-q", "--html", page.string(), set.string()}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_file(page);
  EXPECT_LT(html.size(), 1500000u) << "the page of 16 x 59 steps grew large";
  const json out = report_json({set.string()});
  ASSERT_EQ(out["processes"].size(), 16u);

  // What each process's numbers say: steps, GPU busy share, total per grouped range name.
  std::map<std::pair<std::string, int>, double> busy_share;
  std::map<int, std::vector<double>> busy_by_step;
  std::map<std::pair<std::string, int>, double> communication_share;
  std::map<int, std::vector<double>> communication_by_step;
  std::map<std::string, long long> totals;
  for (const json& p : out["processes"]) {
    for (const json& s : p["steps"]) {
      ASSERT_FALSE(s["gpu_busy_ns"].is_null());
      const double share = s["gpu_busy_ns"].get<double>() / s["duration_ns"].get<double>();
      busy_share[{p["name"], s["step"].get<int>()}] = share;
      busy_by_step[s["step"].get<int>()].push_back(share);
      // The NCCL all-reduce kernels of every step: its communication share.
      ASSERT_FALSE(s["communication_ns"].is_null());
      const double communication =
          s["communication_ns"].get<double>() / s["duration_ns"].get<double>();
      communication_share[{p["name"], s["step"].get<int>()}] = communication;
      communication_by_step[s["step"].get<int>()].push_back(communication);
      for (const json& t : s["top_level_ranges"]) {
        std::string name = t["range"];
        if (name.rfind("data copy in ", 0) == 0) name = "data copy in {n}";
        totals[name] += t["ns"].get<long long>();
      }
    }
  }
  EXPECT_EQ(busy_share.size(), 16u * 59u);
  std::vector<std::pair<std::string, long long>> order(totals.begin(), totals.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> legend;
  for (const auto& [name, total] : order) legend.push_back(name);
  EXPECT_EQ(std::set<std::string>(legend.begin(), legend.end()),
            (std::set<std::string>{"forward", "optimizer", "data copy in {n}"}));

  // The per-step table: the medians across processes of each one's busy and communication
  // shares, as printed.
  const auto median_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2.0;
  };
  for (const auto& [step, shares] : busy_by_step) {
    const double busy = median_of(shares);
    const double communication = median_of(communication_by_step.at(step));
    char cell[128];
    std::snprintf(cell, sizeof cell,
                  "<tr><td>%d</td><td>[0-9.]+</td><td>%.1f</td><td>%.1f</td><td>%.1f</td>", step,
                  100.0 * busy, 100.0 - 100.0 * busy, 100.0 * communication);
    EXPECT_TRUE(std::regex_search(html, std::regex(cell))) << "step " << step << ": " << cell;
  }

  const std::vector<std::pair<std::string, std::string>> views = {
      {"1600,1000", ""}, {"900,700", ""}, {"1600,1000", "#zoom=6"}};
  std::map<std::string, DrawnPage> seen;
  for (const auto& [size, fragment] : views) {
    const std::string where = size + fragment;
    const DrawnPage d = draw_in_chromium(page, size, fragment, dir / "profile");
    EXPECT_EQ(d.bars.size(), 16u * 59u) << where;
    EXPECT_EQ(d.strips.size(), 16u * 59u) << where;
    for (const auto& [key, width] : d.bars) {
      ASSERT_EQ(d.strips.count(key), 1u) << where << " " << key.first << " step " << key.second;
      EXPECT_NEAR(d.strips.at(key) / width, busy_share.at(key), 0.005)
          << where << " " << key.first << " step " << key.second;
      ASSERT_EQ(d.comms.count(key), 1u) << where << " " << key.first << " step " << key.second;
      EXPECT_NEAR(d.comms.at(key) / width, communication_share.at(key), 0.005)
          << where << " " << key.first << " step " << key.second;
    }
    expect_headers_apart(d, where);
    EXPECT_EQ(d.legend, legend) << where;
    ASSERT_EQ(d.labels.size(), 16u) << where;
    for (const auto& [label, cut] : d.labels) {
      EXPECT_EQ(cut, label.rfind("vllm_async_generation_worker (pid ", 0) == 0)
          << where << " " << label;
    }
    // The timeline scrolls in its own box; the page itself is never wider than the window.
    EXPECT_LE(d.page_width, d.window_width) << where;
    EXPECT_LE(d.box_width, d.window_width) << where;
    seen[where] = d;
  }
  // Narrow: the columns keep their least width and the box scrolls; zoomed in: six times as
  // wide, with more step headers than at fit, still apart.
  const DrawnPage& wide = seen.at("1600,1000");
  const DrawnPage& narrow = seen.at("900,700");
  const DrawnPage& zoomed = seen.at("1600,1000#zoom=6");
  EXPECT_LE(wide.box_scroll_width, wide.box_width);
  EXPECT_GT(narrow.box_scroll_width, narrow.box_width);
  EXPECT_GT(zoomed.svg_width, 5.0 * wide.svg_width);
  EXPECT_GT(zoomed.headers.size(), wide.headers.size());
  EXPECT_EQ(zoomed.headers.size(), 59u);

  // The controls, used as a reader would: a copy of the page with a script that presses +,
  // then - twice, turns the wheel with ctrl held over the timeline, and presses fit, noting the
  // timeline's width after each (the wheel's zoom is drawn at the next frame).
  const std::string probe = R"(<script>
(function () {
  var svg = document.getElementById('plot'), box = document.querySelector('#timeline .tl-scroll');
  var press = function (how) { document.querySelector('button[data-zoom=' + how + ']').click(); };
  var seen = [svg.getAttribute('width')];
  press('in'); seen.push(svg.getAttribute('width'));
  press('out'); press('out'); seen.push(svg.getAttribute('width'));
  var r = box.getBoundingClientRect();
  box.dispatchEvent(new WheelEvent('wheel', {ctrlKey: true, deltaY: -500, clientX: r.left + 300,
                                             clientY: r.top + 50, bubbles: true, cancelable: true}));
  setTimeout(function () {
    seen.push(svg.getAttribute('width'), String(Math.round(box.scrollLeft)));
    press('fit'); seen.push(svg.getAttribute('width'));
    document.body.setAttribute('data-probe', seen.join(' '));
  }, 500);
})();
</script>
</body>)";
  std::string probed = html;
  probed.replace(probed.rfind("</body>"), 7, probe);
  const fs::path probe_page = dir / "probe.html";
  {
    std::ofstream o(probe_page);
    o << probed;
  }
  const auto used =
      run({"chromium", "--headless", "--no-sandbox", "--disable-gpu",
           "--user-data-dir=" + (dir / "profile").string(), "--window-size=1600,1000",
           "--virtual-time-budget=5000", "--dump-dom", "file://" + probe_page.string()},
          {});
  ASSERT_EQ(used.exit_code, 0) << used.err;
  std::istringstream widths(attribute(tags(used.out, "<body").at(0), "data-probe"));
  double at_fit = 0, plus = 0, minus_twice = 0, wheel = 0, scrolled = 0, fit_again = 0;
  widths >> at_fit >> plus >> minus_twice >> wheel >> scrolled >> fit_again;
  ASSERT_FALSE(widths.fail()) << "the probe did not finish: " << widths.str();
  EXPECT_EQ(at_fit, wide.svg_width);
  EXPECT_GT(plus, 1.3 * at_fit);   // + widens the columns by half (short ones less)
  EXPECT_EQ(minus_twice, at_fit);  // - stops at fit
  EXPECT_GT(wheel, 2.0 * at_fit);  // ctrl + wheel zooms in
  EXPECT_GT(scrolled, 0);          // ... at the pointer, so the box scrolled
  EXPECT_EQ(fit_again, at_fit);    // fit brings it back
  fs::remove_all(dir);
}
