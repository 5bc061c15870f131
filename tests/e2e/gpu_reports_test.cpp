// nsel report on real GPU captures (../shared/gpu-reports, read in place and never copied into
// the repository) against nsys's own answers: the kernel table row for row with
// `nsys stats -r gpukernsum` (2022.4) and `cuda_gpu_kern_gb_sum` (2023.4), with and without
// `:base` (short names); the NVTX table with `nvtxppsum` / `nvtx_pushpop_sum`; GPU busy,
// communication and compute per step against unions computed here by another method (SQL and a
// sweep of clipped intervals); and the same summary whatever order an export's rows come in.
// Every export is unpacked (or copied) into a temporary folder first: nothing is ever written
// beside the shared files.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "support.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using nsel::test::run;

namespace {

const fs::path kSets = nsel::test::gpu_reports_dir(NSEL_SOURCE_DIR);
const std::string kNsel = NSEL_BINARY;
const std::string kNsys2022 = "/usr/bin/nsys";
const std::string kNsys2023 = "/opt/nsight-systems-2023.4/usr/bin/nsys";

// The reports each generation names the tables by.
struct Generation {
  std::string nsys;
  std::string kernels;  // one row per name, grid and block
  std::string nvtx;
};
const std::vector<Generation> kGenerations = {
    {kNsys2022, "gpukernsum", "nvtxppsum"},
    {kNsys2023, "cuda_gpu_kern_gb_sum", "nvtx_pushpop_sum"},
};

// One CSV line, with quoted fields ("a, b" and "" inside quotes).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// "  24    1    1" as "24 1 1".
std::string words(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  std::string word;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

// The tables of one `nsys stats -f csv -r a,b,c FILE` run, by report ("gpukernsum:base"); a
// report nsys skipped ("does not contain ... data") is absent.
using Table = std::vector<std::vector<std::string>>;
std::map<std::string, Table> stats_tables(const std::string& out) {
  std::map<std::string, Table> tables;
  std::istringstream in(out);
  std::string line;
  std::string key;  // the report being read
  bool header = false;
  const std::regex processing(
      R"(^Processing \[.*\] with \[.*/([a-z_0-9]+)\.py\](\(base\))?\.\.\.)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, processing)) {
      key = m[1].str() + (m[2].matched ? ":base" : "");
      header = false;
      continue;
    }
    if (key.empty() || line.empty()) continue;
    if (!header) {
      header = true;
      if (line.rfind("Time (%)", 0) != 0) {  // "SKIPPED: ... does not contain ... data"
        key.clear();
      } else {
        tables[key];
      }
      continue;
    }
    std::vector<std::string> cells = csv_cells(line);
    if (cells.size() == 11) {  // GridXYZ and BlockXYZ as nsel writes them
      cells[8] = words(cells[8]);
      cells[9] = words(cells[9]);
    }
    tables[key].push_back(std::move(cells));
  }
  return tables;
}

std::string one_decimal(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

// A row of nsel's JSON as nsys prints it (kernels: with grid and block before the name).
std::vector<std::string> nsel_cells(const json& row) {
  std::vector<std::string> cells = {one_decimal(row["time_percent"].get<double>()),
                                    std::to_string(row["total_ns"].get<long long>()),
                                    std::to_string(row["instances"].get<long long>()),
                                    one_decimal(row["avg_ns"].get<double>()),
                                    one_decimal(row["median_ns"].get<double>()),
                                    std::to_string(row["min_ns"].get<long long>()),
                                    std::to_string(row["max_ns"].get<long long>()),
                                    one_decimal(row["stddev_ns"].get<double>())};
  if (row.contains("grid")) {
    cells.push_back(row["grid"]);
    cells.push_back(row["block"]);
  }
  cells.push_back(row["name"]);
  return cells;
}

struct Capture {
  std::string set;
  fs::path file;                       // the temporary copy
  std::map<std::string, Table> stats;  // every generation's tables, "<nsys>|<report>"
};

struct Data {
  fs::path dir;
  std::vector<Capture> captures;
  std::map<fs::path, json> full;   // nsel report --json, by export file
  std::map<fs::path, json> brief;  // with --short-kernel-names
  json comparison;                 // the "steps" across all captures
  json batches;                    // ai-profiler-mnist with --step-name 'Batch {n}'
  double seconds = 0;
};

json report(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {kNsel, "report", "--json", "-q", "--top", "1000000"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const auto r = run(argv, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

Data* unpacked = nullptr;

// The unpacked copies (a few hundred MB) go when the tests end; the links in it are removed,
// never what they point to.
class RemoveCopies : public ::testing::Environment {
 public:
  void TearDown() override {
    if (unpacked != nullptr) fs::remove_all(unpacked->dir);
  }
};
[[maybe_unused]] const ::testing::Environment* const kRemoveCopies =
    ::testing::AddGlobalTestEnvironment(new RemoveCopies);

// Unpacked once per run: every stored export and every SQLite-only set.
const Data& data() {
  Data*& d = unpacked;
  if (d != nullptr) return *d;
  const auto began = std::chrono::steady_clock::now();
  d = new Data;
  d->dir = nsel::test::make_temp_dir("gpu-reports");
  for (const auto& set : fs::directory_iterator(kSets)) {
    if (!set.is_directory()) continue;
    const std::string name = set.path().filename();
    for (const auto& f : fs::directory_iterator(set.path())) {
      if (f.path().extension() != ".sqlite") continue;
      const fs::path copy = d->dir / (name + "__" + f.path().filename().string());
      fs::copy_file(f.path(), copy);
      d->captures.push_back({name, copy, {}});
    }
    if (!fs::is_directory(set.path() / "exports")) continue;
    for (const auto& f : fs::directory_iterator(set.path() / "exports")) {
      if (f.path().extension() != ".xz") continue;
      const fs::path copy = d->dir / (name + "__" + f.path().stem().string());
      const auto r =
          run({"sh", "-c", "xz -dkc \"$0\" > \"$1\"", f.path().string(), copy.string()}, {});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      d->captures.push_back({name, copy, {}});
    }
  }
  // Two reports exported here, each by a generation that reads it (the stored exports were made
  // from the others the same way): through a link in the temporary folder, so that nothing is
  // ever written beside the shared file.
  const fs::path links = d->dir / "links";
  fs::create_directories(links);
  for (const auto& [set, report, nsys] :
       {std::tuple<std::string, std::string, std::string>{"nersc-sc22-ddp",
                                                          "4gpu_baseline_sc21.qdrep", kNsys2022},
        {"alcf-seqpar-2node", "lineprofiling_seq_parallel_fp32-ranks8-nodes2-T1_0.nsys-rep",
         kNsys2023}}) {
    if (!fs::exists(nsys) || !fs::exists(kSets / set / report)) continue;
    const fs::path link = links / report;
    fs::create_symlink(kSets / set / report, link);
    const fs::path out = d->dir / (set + "__fresh_" + link.stem().string() + ".sqlite");
    const auto r = run({nsys, "export", "--type", "sqlite", "-o", out.string(), link.string()}, {});
    EXPECT_EQ(r.exit_code, 0) << nsys << " export " << report << ": " << r.err;
    if (fs::exists(out)) d->captures.push_back({set, out, {}});
  }
  std::sort(d->captures.begin(), d->captures.end(),
            [](const Capture& a, const Capture& b) { return a.file < b.file; });
  // nsys stats of both generations, two at a time.
  for (Capture& c : d->captures) {
    std::vector<std::pair<std::string, nsel::test::Started>> started;
    for (const Generation& g : kGenerations) {
      if (!fs::exists(g.nsys)) continue;
      started.emplace_back(
          g.nsys,
          nsel::test::start({g.nsys, "stats", "-f", "csv", "-r",
                             g.kernels + "," + g.kernels + ":base," + g.nvtx, c.file.string()},
                            {}));
    }
    for (auto& [nsys, s] : started) {
      const auto r = nsel::test::finish(s);
      EXPECT_EQ(r.exit_code, 0) << nsys << " stats " << c.file << ": " << r.err;
      for (auto& [table, rows] : stats_tables(r.out)) c.stats[nsys + "|" + table] = rows;
    }
  }
  std::vector<std::string> files;
  for (const Capture& c : d->captures) files.push_back(c.file.string());
  const json full = report(files);
  for (const json& p : full["processes"]) d->full[p["export"].get<std::string>()] = p;
  d->comparison = full["steps"];
  std::vector<std::string> brief_args = {"--short-kernel-names"};
  brief_args.insert(brief_args.end(), files.begin(), files.end());
  const json brief = report(brief_args);
  for (const json& p : brief["processes"]) {
    d->brief[p["export"].get<std::string>()] = p;
  }
  for (const Capture& c : d->captures) {
    if (c.set == "ai-profiler-mnist") {
      d->batches = report({"--step-name", "Batch {n}", c.file.string()})["processes"][0];
    }
  }
  d->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::printf("gpu-reports: %zu captures unpacked, summarised and asked of nsys in %.1f s\n",
              d->captures.size(), d->seconds);
  return *d;
}

#define NEED_GPU_REPORTS() NSEL_SKIP_WITHOUT_GPU_REPORTS(kSets)

// Row for row: the same rows in every column; in 2023.4's order (total time, then instances,
// then name) row by row, and in 2022.4's (total time only) by total time.
void expect_same_rows(const Table& ours, const Table& theirs, bool full_order,
                      const std::string& what) {
  ASSERT_EQ(ours.size(), theirs.size()) << what;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i][1], theirs[i][1]) << what << " row " << i;
    if (full_order) {
      EXPECT_EQ(ours[i][2], theirs[i][2]) << what << " row " << i;
      EXPECT_EQ(ours[i].back(), theirs[i].back()) << what << " row " << i;
    }
  }
  Table a = ours;
  Table b = theirs;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << what;
}

Table nsel_table(const json& rows) {
  Table out;
  for (const json& r : rows) out.push_back(nsel_cells(r));
  return out;
}

TEST(GpuReports, KernelAndNvtxTablesEqualNsysStatsOfBothGenerationsRowForRow) {
  NEED_GPU_REPORTS();
  const Data& d = data();
  ASSERT_GE(d.captures.size(), 22u);
  std::size_t compared = 0;
  std::size_t kernel_rows = 0;
  for (const Capture& c : d.captures) {
    ASSERT_TRUE(d.full.count(c.file)) << c.file;
    const json& ours = d.full.at(c.file);
    const json& ours_brief = d.brief.at(c.file);
    for (const Generation& g : kGenerations) {
      if (!fs::exists(g.nsys)) continue;
      const std::string what = c.file.filename().string() + " vs " + g.nsys + " ";
      const bool full_order = g.nsys == kNsys2023;
      // Every capture here has kernels, and nsys of both generations reads every one.
      ASSERT_TRUE(c.stats.count(g.nsys + "|" + g.kernels)) << what;
      expect_same_rows(nsel_table(ours["kernels"]), c.stats.at(g.nsys + "|" + g.kernels),
                       full_order, what + g.kernels);
      expect_same_rows(nsel_table(ours_brief["kernels"]),
                       c.stats.at(g.nsys + "|" + g.kernels + ":base"), full_order,
                       what + g.kernels + ":base");
      EXPECT_EQ(ours["kernel_names"], ours["kernels"].size());
      kernel_rows += ours["kernels"].size();
      const auto nvtx = c.stats.find(g.nsys + "|" + g.nvtx);
      if (nvtx == c.stats.end()) {  // nsys: "does not contain NV Tools Extension (NVTX) data"
        EXPECT_FALSE(ours["has_nvtx"].get<bool>()) << what;
        EXPECT_TRUE(ours["nvtx"].empty()) << what;
      } else {
        expect_same_rows(nsel_table(ours["nvtx"]), nvtx->second, false, what + g.nvtx);
      }
      ++compared;
    }
  }
  EXPECT_GE(compared, d.captures.size());
  std::printf("compared %zu capture/generation pairs, %zu kernel rows; setup %.1f s\n", compared,
              kernel_rows, d.seconds);
}

// Grouping by the short name merges what nsys keeps apart by full name: the sum of the rows is
// the same, the rows are fewer (jacobi_kernel<32, 32> of two grids, template kernels).
TEST(GpuReports, FullNamesKeepApartWhatShortNamesMerge) {
  NEED_GPU_REPORTS();
  const Data& d = data();
  bool fewer = false;
  for (const Capture& c : d.captures) {
    const json& full = d.full.at(c.file)["kernels"];
    const json& brief = d.brief.at(c.file)["kernels"];
    long long a = 0;
    long long b = 0;
    for (const json& r : full) a += r["total_ns"].get<long long>();
    for (const json& r : brief) b += r["total_ns"].get<long long>();
    EXPECT_EQ(a, b) << c.file;
    EXPECT_LE(brief.size(), full.size()) << c.file;
    fewer |= brief.size() < full.size();
  }
  EXPECT_TRUE(fewer);
}

// Kernels of NCCL are communication (ncclKernel_* of 2021-2022 NCCL, ncclDevKernel_* of later
// ones), every other kernel of these captures is not.
TEST(GpuReports, NcclKernelsAreCommunicationAndNoOthers) {
  NEED_GPU_REPORTS();
  const Data& d = data();
  std::set<std::string> seen;
  for (const Capture& c : d.captures) {
    for (const json& r : d.brief.at(c.file)["kernels"]) {
      const std::string name = r["name"];
      const bool nccl = name.rfind("nccl", 0) == 0;
      EXPECT_EQ(r["communication"].get<bool>(), nccl) << c.file << ": " << name;
      if (nccl) seen.insert(name.substr(0, name.find('_')));
    }
    for (const json& r : d.full.at(c.file)["kernels"]) {
      const std::string name = r["name"];
      EXPECT_EQ(r["communication"].get<bool>(), name.rfind("nccl", 0) == 0) << name;
    }
  }
  EXPECT_EQ(seen, (std::set<std::string>{"ncclDevKernel", "ncclKernel"}));
}

// GPU activity computed here by another method than nsel's: every interval read with SQL
// (communication: a short name beginning with "nccl"), then for each step the intervals on the
// devices of the step's process are cut to the step first, sorted and merged.
struct Interval {
  long long start;
  long long end;
  long long device;
  bool communication;
};
struct Busy {
  long long all = 0;
  long long communication = 0;
};

std::vector<std::vector<long long>> query_rows(sqlite3* db, const std::string& sql,
                                               const std::vector<long long>& parameters = {}) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    sqlite3_bind_int64(s, static_cast<int>(i + 1), parameters[i]);
  }
  std::vector<std::vector<long long>> rows;
  while (sqlite3_step(s) == SQLITE_ROW) {
    std::vector<long long> row;
    for (int c = 0; c < sqlite3_column_count(s); ++c) row.push_back(sqlite3_column_int64(s, c));
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(s);
  return rows;
}

long long merged_length(std::vector<std::pair<long long, long long>> cut) {
  std::sort(cut.begin(), cut.end());
  long long total = 0;
  long long run_start = 0;
  long long run_end = LLONG_MIN;
  for (const auto& [x, y] : cut) {
    if (x > run_end) {
      if (run_end != LLONG_MIN) total += run_end - run_start;
      run_start = x;
      run_end = y;
    } else {
      run_end = std::max(run_end, y);
    }
  }
  if (run_end != LLONG_MIN) total += run_end - run_start;
  return total;
}

Busy busy_in_step(const std::vector<Interval>& intervals, const std::set<long long>& devices,
                  long long a, long long b) {
  std::vector<std::pair<long long, long long>> all;
  std::vector<std::pair<long long, long long>> communication;
  for (const Interval& i : intervals) {
    if (!devices.count(i.device)) continue;
    const long long x = std::max(a, i.start);
    const long long y = std::min(b, i.end);
    if (y <= x) continue;
    all.emplace_back(x, y);
    if (i.communication) communication.emplace_back(x, y);
  }
  return {merged_length(all), merged_length(communication)};
}

TEST(GpuReports, GpuBusyCommunicationAndComputePerStepAreUnionsOnTheStepProcessDevices) {
  NEED_GPU_REPORTS();
  const Data& d = data();
  std::size_t steps_checked = 0;
  long long communication = 0;
  for (const Capture& c : d.captures) {
    const bool mnist = c.set == "ai-profiler-mnist";
    if (c.set != "nersc-sc22-ddp" && c.set != "nersc-sc23-vit" && !mnist) continue;
    const json& p = mnist ? d.batches : d.full.at(c.file);
    ASSERT_FALSE(p["steps"].empty()) << c.file;
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(c.file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    std::vector<Interval> intervals;
    for (const auto& r :
         query_rows(db,
                    "SELECT k.start, k.end, k.deviceId, n.value LIKE 'nccl%' FROM "
                    "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.shortName UNION ALL "
                    "SELECT start, end, deviceId, 0 FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL "
                    "SELECT start, end, deviceId, 0 FROM CUPTI_ACTIVITY_KIND_MEMSET")) {
      intervals.push_back({r[0], r[1], r[2], r[3] != 0});
    }
    // The process of each step range's thread, and the devices of each process.
    std::map<long long, long long> process_of_start;
    for (const auto& r : query_rows(db,
                                    "SELECT e.start, e.globalTid & -16777216 FROM NVTX_EVENTS e "
                                    "LEFT JOIN StringIds s ON e.textId = s.id WHERE "
                                    "COALESCE(e.text, s.value) LIKE '" +
                                        std::string(mnist ? "Batch %" : "step %") + "'")) {
      process_of_start[r[0]] = r[1];
    }
    std::map<long long, std::set<long long>> devices_of;
    for (const auto& r : query_rows(db,
                                    "SELECT globalPid, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL "
                                    "UNION SELECT globalPid, deviceId FROM "
                                    "CUPTI_ACTIVITY_KIND_MEMCPY UNION SELECT globalPid, deviceId "
                                    "FROM CUPTI_ACTIVITY_KIND_MEMSET")) {
      devices_of[r[0]].insert(r[1]);
    }
    for (const json& s : p["steps"]) {
      const long long a = s["start_ns"];
      const long long b = s["end_ns"];
      const std::string name =
          (mnist ? "Batch " : "step ") + std::to_string(s["step"].get<long long>());
      ASSERT_TRUE(process_of_start.count(a)) << c.file << " " << name;
      const Busy busy = busy_in_step(intervals, devices_of[process_of_start.at(a)], a, b);
      EXPECT_EQ(s["gpu_busy_ns"].get<long long>(), busy.all) << c.file << " " << name;
      EXPECT_EQ(s["gpu_idle_ns"].get<long long>(), b - a - busy.all) << c.file << " " << name;
      EXPECT_EQ(s["communication_ns"].get<long long>(), busy.communication) << c.file << name;
      EXPECT_EQ(s["compute_ns"].get<long long>(), busy.all - busy.communication) << c.file;
      communication += busy.communication;
      ++steps_checked;
    }
    sqlite3_close(db);
  }
  EXPECT_GE(steps_checked, 59u * 4 + 29 * 2 + 31 + 59);
  EXPECT_GT(communication, 0);  // sc22's all-reduce kernels
}

// sc22 counts steps from 0 and names a range after the step it belongs to ("data copy in 5" in
// step 5): one range, "data copy in {n}", in every step.
TEST(GpuReports, StepsFromZeroAndRangesCarryingTheStepNumberGroupedAsOne) {
  NEED_GPU_REPORTS();
  const Data& d = data();
  std::size_t files = 0;
  for (const Capture& c : d.captures) {
    if (c.set != "nersc-sc22-ddp") continue;
    ++files;
    const json& steps = d.full.at(c.file)["steps"];
    ASSERT_FALSE(steps.empty());
    EXPECT_EQ(steps[0]["step"], 0) << c.file;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      EXPECT_EQ(steps[i]["step"], i) << c.file;
      bool grouped = false;
      for (const json& share : steps[i]["top_level_ranges"]) {
        const std::string range = share["range"];
        EXPECT_FALSE(std::regex_search(range, std::regex("data copy in [0-9]"))) << range;
        grouped |= range == "data copy in {n}";
      }
      EXPECT_TRUE(grouped) << c.file << " step " << i;
    }
  }
  EXPECT_EQ(files, 6u);
}

// Across the captures (all of sc22's files share steps 0-28): each process's wait is its
// communication time above the least of that step.
TEST(GpuReports, CommunicationWaitIsTheCommunicationTimeAboveTheStepsLeast) {
  NEED_GPU_REPORTS();
  const Data& d = data();
  std::map<std::string, std::map<long long, long long>> communication;  // label -> step -> ns
  for (const auto& [file, p] : d.full) {
    for (const json& s : p["steps"]) {
      if (s["communication_ns"].is_null()) continue;
      communication[p["label"]][s["step"]] += s["communication_ns"].get<long long>();
    }
  }
  std::size_t positive = 0;
  for (const json& s : d.comparison) {
    const long long step = s["step"];
    long long least = LLONG_MAX;
    for (const auto& [label, by_step] : communication) {
      if (by_step.count(step)) least = std::min(least, by_step.at(step));
    }
    for (const auto& [label, wait] : s["communication_wait_ns"].items()) {
      if (!communication.count(label) || !communication.at(label).count(step)) {
        EXPECT_TRUE(wait.is_null()) << label;
        continue;
      }
      EXPECT_EQ(wait.get<long long>(), communication.at(label).at(step) - least) << label;
      positive += wait.get<long long>() > 0;
    }
  }
  EXPECT_GT(positive, 0u);
}

// nsys 2025.6 may export rows in any order, timestamps included: the summary of an export
// whose event tables are rewritten in random order is the summary of the export.
TEST(GpuReports, TheSummaryIsTheSameWhateverOrderTheExportRowsComeIn) {
  NEED_GPU_REPORTS();
  const Data& d = data();
  for (const std::string name :
       {"nersc-sc22-ddp__4gpu_baseline.nsys2022.4.sqlite", "nsys-ai__mfu_2gpu_before.sqlite"}) {
    const fs::path original = d.dir / name;
    ASSERT_TRUE(fs::exists(original));
    const fs::path dir = nsel::test::make_temp_dir("shuffled");
    const fs::path shuffled = dir / name;
    fs::copy_file(original, shuffled);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(shuffled.c_str(), &db), SQLITE_OK);
    for (const char* table :
         {"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
          "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME", "OSRT_API"}) {
      const std::string t = table;
      const std::string sql = "CREATE TABLE shuffled AS SELECT * FROM " + t +
                              " ORDER BY random(); DROP TABLE " + t +
                              "; ALTER TABLE shuffled RENAME TO " + t + ";";
      char* error = nullptr;
      if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
        EXPECT_NE(std::string(error), "") << t;  // a table the export does not have
        sqlite3_free(error);
        sqlite3_exec(db, "DROP TABLE IF EXISTS shuffled", nullptr, nullptr, nullptr);
      }
    }
    // The rows really are out of order now.
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT start FROM NVTX_EVENTS LIMIT 1000", -1, &s, nullptr),
              SQLITE_OK);
    std::vector<long long> starts;
    while (sqlite3_step(s) == SQLITE_ROW) starts.push_back(sqlite3_column_int64(s, 0));
    sqlite3_finalize(s);
    sqlite3_close(db);
    EXPECT_FALSE(std::is_sorted(starts.begin(), starts.end()));

    json mine = report({shuffled.string()})["processes"][0];
    json theirs = d.full.at(original);
    for (json* p : {&mine, &theirs}) {
      p->erase("report");
      p->erase("export");
    }
    EXPECT_FALSE(theirs["kernels"].empty());
    EXPECT_EQ(mine, theirs) << name;
    fs::remove_all(dir);
  }
}

}  // namespace
