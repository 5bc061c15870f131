// `nsel report` end to end on reports made here by real nsys (NVTX and OS runtime, no GPU):
// golden comparisons with `nsys stats` and with the exports themselves, the export cache, bad
// input, broken reports, and the HTML page rendered by a real headless browser.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <fstream>
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
        nsel::stop_nsys_agents(r.pid);
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
  EXPECT_NE(r.out.find("Stragglers (more than 10.0% above the step's median)"), std::string::npos);
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
  const fs::path export_file = fs::path(report).replace_extension(".sqlite");
  const auto first = run({kNsel, "report", dir.string()}, {});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("nsel report: exporting " + report.string()), std::string::npos);
  ASSERT_TRUE(fs::exists(export_file));
  const auto made = fs::last_write_time(export_file);

  const auto second = run({kNsel, "report", dir.string()}, {});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err.find("exporting"), std::string::npos) << second.err;
  EXPECT_EQ(fs::last_write_time(export_file), made);

  // The report is newer than its export (a report rewritten in place).
  fs::last_write_time(export_file, fs::last_write_time(report) - std::chrono::seconds(5));
  const auto third = run({kNsel, "report", dir.string()}, {});
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_NE(third.err.find("exporting"), std::string::npos);
  EXPECT_GE(fs::last_write_time(export_file), fs::last_write_time(report));
  // Only the report and its export: no temporary file left behind.
  EXPECT_EQ(nsel::test::files_in(dir).size(), 2u);
  fs::remove_all(dir);
}

TEST(Report, ReadOnlyFolderExportsIntoTheCacheFolder) {
  const fs::path dir = copy_of_reports("report-readonly", 1);
  const fs::path cache = nsel::test::make_temp_dir("report-cachedir");
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  ASSERT_EQ(::chmod(cache.c_str(), 0777), 0);
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
  EXPECT_EQ(r.err,
            "nsel: '" + d +
                "/dtensor_policy_worker_1:5_1.nsys-rep': empty report (0 bytes): the process "
                "ended before nsys finished writing it\n"
                "nsel: '" +
                d +
                "/dtensor_policy_worker_1:5_2.nsys-rep': not a readable Nsight Systems report "
                "(nsys " +
                version->text +
                " export exited with 1)\n"
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

TEST(Report, BadOptionsAreOneLineWithExitCodeTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--step-name", "iteration"},
       "nsel: error: --step-name='iteration': the step number's place \"{n}\" must appear once; "
       "expected an NVTX range name with {n} where the step number goes, for example 'step {n}' "
       "or 'train_step_{n}'\n"},
      {{"--straggler-percent", "-5"},
       "nsel: error: --straggler-percent='-5': not a percentage; expected a number >= 0, for "
       "example 10 (10 % above the step's median)\n"},
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

TEST(Report, HtmlPageDrawsEveryWorkerAndStepInHeadlessChromium) {
  const fs::path dir = nsel::test::make_temp_dir("report-html");
  const fs::path page = dir / "report.html";
  const auto r = run({kNsel, "report", "-q", "--html", page.string(), fixture->dir.string()}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Self-contained: nothing is fetched from anywhere.
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);

  const auto browser = run(
      {"chromium", "--headless", "--no-sandbox", "--disable-gpu",
       "--user-data-dir=" + (dir / "profile").string(), "--dump-dom", "file://" + page.string()},
      {});
  ASSERT_EQ(browser.exit_code, 0) << "Debian's chromium is needed (scripts/setup.d): "
                                  << browser.err;
  const std::string& dom = browser.out;
  // Every (worker, step) bar laid out by the browser with a real size.
  std::set<std::pair<std::string, int>> drawn;
  const std::regex bar(
      "<rect class=\"stepbar\" data-worker=\"([^\"]+)\" data-step=\"([0-9]+)\"[^>]*"
      "data-drawn=\"yes\"");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), bar); it != std::sregex_iterator();
       ++it) {
    drawn.emplace((*it)[1], std::stoi((*it)[2]));
  }
  const json out = report_json({fixture->dir.string()});
  std::set<std::pair<std::string, int>> expected;
  for (const json& p : out["processes"]) {
    for (const json& s : p["steps"]) expected.emplace(p["label"], s["step"].get<int>());
    // The worker's name is drawn beside its bars.
    EXPECT_NE(dom.find(">" + p["label"].get<std::string>() + "</text>"), std::string::npos);
  }
  EXPECT_EQ(expected.size(), 12u);
  EXPECT_EQ(drawn, expected);
  EXPECT_NE(dom.find("data-drawn-bars=\"12\""), std::string::npos);
  fs::remove_all(dir);
}
