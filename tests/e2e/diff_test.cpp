// nsel diff end to end, on real GPU captures (../shared/gpu-reports, read in place, never copied
// into the repository): the sets' documented changes found (the NERSC SC22 DDP job run with
// bigger buckets does 295 all-reduce kernels instead of 472; the nsys-ai before/after pair does
// 62 SendRecv kernels instead of 66), every kernel count equal to the exports' own rows, and
// runs made from a real capture with known answers: the same run (unchanged), every time
// stretched by 10 % (slower by 10 %, the gate), one rank of four stretched (the job unchanged,
// that rank out of line) and one rank slower while the rest got faster. Then the CSV files, the
// HTML page in headless Chromium, and the errors. Every export is unpacked into a temporary
// folder first.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "diff_page.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using nsel::test::run;

namespace {

const fs::path kSets = nsel::test::gpu_reports_dir(NSEL_SOURCE_DIR);
const std::string kNsel = NSEL_BINARY;

#define NEED_GPU_REPORTS() NSEL_SKIP_WITHOUT_GPU_REPORTS(kSets)

fs::path temp_root;

class RemoveTemp : public ::testing::Environment {
 public:
  void TearDown() override {
    if (!temp_root.empty()) fs::remove_all(temp_root);
  }
};
[[maybe_unused]] const ::testing::Environment* const kRemoveTemp =
    ::testing::AddGlobalTestEnvironment(new RemoveTemp);

fs::path temp() {
  if (temp_root.empty()) temp_root = nsel::test::make_temp_dir("diff-e2e");
  return temp_root;
}

// The stored export of a set, unpacked once into the temporary folder.
fs::path unpacked(const std::string& set, const std::string& name) {
  const fs::path out = temp() / "unpacked" / (set + "__" + name);
  if (fs::exists(out)) return out;
  fs::create_directories(out.parent_path());
  const fs::path xz = kSets / set / "exports" / (name + ".xz");
  if (fs::exists(xz)) {
    const auto r = run({"sh", "-c", "xz -dkc \"$0\" > \"$1\"", xz.string(), out.string()}, {});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  } else {
    fs::copy_file(kSets / set / name, out);
  }
  return out;
}

class Database {
 public:
  explicit Database(const fs::path& file) {
    EXPECT_EQ(sqlite3_open(file.c_str(), &db_), SQLITE_OK) << file;
  }
  ~Database() { sqlite3_close(db_); }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  void exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << sql << ": " << (error ? error : "");
    sqlite3_free(error);
  }
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    std::vector<std::vector<std::string>> out;
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr), SQLITE_OK) << sql;
    while (statement && sqlite3_step(statement) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(statement); ++c) {
        const auto* text = sqlite3_column_text(statement, c);
        row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(statement);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

// A copy of an export with every timestamp multiplied by `factor` (per mille: 1100 = 10 %
// slower): every table's start and end, so that steps, ranges and kernels all last `factor`
// times as long and nest as before.
fs::path stretched_copy(const fs::path& export_file, const fs::path& copy, int per_mille) {
  fs::create_directories(copy.parent_path());
  fs::copy_file(export_file, copy, fs::copy_options::overwrite_existing);
  if (per_mille == 1000) return copy;
  Database db(copy);
  db.exec("BEGIN");
  for (const auto& table : db.rows("SELECT name FROM sqlite_master WHERE type = 'table'")) {
    std::set<std::string> columns;
    for (const auto& c : db.rows("PRAGMA table_info('" + table[0] + "')")) columns.insert(c[1]);
    if (columns.count("start") && columns.count("end")) {
      const std::string f = std::to_string(per_mille);
      db.exec("UPDATE \"" + table[0] + "\" SET start = start * " + f +
              " / 1000, \"end\" = \"end\" * " + f + " / 1000");
    }
  }
  db.exec("COMMIT");
  return copy;
}

// Kernel instances per full name, straight from the export.
std::map<std::string, long long> kernel_counts(const fs::path& export_file) {
  Database db(export_file);
  std::map<std::string, long long> counts;
  for (const auto& row : db.rows("SELECT s.value, COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                 "JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value")) {
    counts[row[0]] = std::stoll(row[1]);
  }
  return counts;
}

long long count_of(const std::map<std::string, long long>& counts, const std::string& part) {
  long long total = 0;
  for (const auto& [name, count] : counts) {
    if (name.find(part) != std::string::npos) total += count;
  }
  return total;
}

struct Diff {
  int exit_code = -1;
  json doc;
  std::string err;
};

Diff diff(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kNsel, "diff", "--json", "-q"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run(argv, {});
  Diff d;
  d.exit_code = r.exit_code;
  d.err = r.err;
  if (!r.out.empty()) d.doc = json::parse(r.out);
  return d;
}

// What the JSON says, by name.
const json& step_metric(const json& doc) {
  return doc.at("metrics").at(0);
}
std::string verdict_of(const json& metric) {
  return metric.at("change").at("verdict");
}
double change_of(const json& metric) {
  return metric.at("change").at("change_percent");
}

const json* kernel_named(const json& doc, const std::string& part) {
  for (const json& k : doc.at("kernels")) {
    if (k.at("name").get<std::string>().find(part) != std::string::npos) return &k;
  }
  return nullptr;
}

long long kernel_total_count(const json& doc, const std::string& side, const std::string& part) {
  long long total = 0;
  for (const json& k : doc.at("kernels")) {
    if (k.at("name").get<std::string>().find(part) != std::string::npos) {
      total += k.at(side).at("count").get<long long>();
    }
  }
  return total;
}

// The four-rank runs made from one real capture: rank r's file is r<rank>.sqlite in `dir`,
// stretched by per_mille[r].
fs::path four_ranks(const std::string& name, const std::vector<int>& per_mille) {
  const fs::path source = unpacked("nersc-sc22-ddp", "4gpu_baseline.nsys2022.4.sqlite");
  const fs::path dir = temp() / name;
  for (std::size_t r = 0; r < per_mille.size(); ++r) {
    stretched_copy(source, dir / ("r" + std::to_string(r) + ".sqlite"), per_mille[r]);
  }
  return dir;
}

TEST(Diff, BiggerBucketsDoFewerAllReducesAsTheSetSays) {
  NEED_GPU_REPORTS();
  const fs::path base = unpacked("nersc-sc22-ddp", "4gpu_baseline.nsys2022.4.sqlite");
  const fs::path bucket = unpacked("nersc-sc22-ddp", "4gpu_bucketcap100mb.nsys2022.4.sqlite");
  const Diff d = diff({base.string(), bucket.string()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  ASSERT_EQ(d.doc.at("pairs").size(), 1u);
  EXPECT_EQ(d.doc["pairs"][0]["paired_by"], "only process");
  EXPECT_TRUE(d.doc.at("unpaired").empty());
  // The set's README: 472 all-reduce kernels in the baseline, 295 with 100 MB buckets; and every
  // kernel's count is the exports' own.
  const auto base_counts = kernel_counts(base);
  const auto bucket_counts = kernel_counts(bucket);
  EXPECT_EQ(count_of(base_counts, "AllReduce"), 472);
  EXPECT_EQ(count_of(bucket_counts, "AllReduce"), 295);
  EXPECT_EQ(kernel_total_count(d.doc, "baseline", "AllReduce"), 472);
  EXPECT_EQ(kernel_total_count(d.doc, "candidate", "AllReduce"), 295);
  const json* all_reduce = kernel_named(d.doc, "AllReduce");
  ASSERT_NE(all_reduce, nullptr);
  EXPECT_TRUE(all_reduce->at("communication").get<bool>());
  EXPECT_EQ(all_reduce->at("count_change").get<long long>(), 295 - 472);
  std::set<std::string> names;
  for (const json& k : d.doc["kernels"]) {
    const std::string name = k["name"];
    names.insert(name);
    const auto b = base_counts.find(name);
    const auto c = bucket_counts.find(name);
    EXPECT_EQ(k["baseline"]["count"].get<long long>(), b == base_counts.end() ? 0 : b->second)
        << name;
    EXPECT_EQ(k["candidate"]["count"].get<long long>(), c == bucket_counts.end() ? 0 : c->second)
        << name;
  }
  for (const auto& [name, count] : base_counts) EXPECT_TRUE(names.count(name)) << name;
  for (const auto& [name, count] : bucket_counts) EXPECT_TRUE(names.count(name)) << name;
  // NCCL's own NVTX ranges say the same.
  bool nvtx_seen = false;
  for (const json& r : d.doc.at("nvtx")) {
    if (r["name"] != "NCCL:ncclAllReduce") continue;  // the domain first, as nvtxppsum
    nvtx_seen = true;
    EXPECT_EQ(r["baseline"]["count"], 472);
    EXPECT_EQ(r["candidate"]["count"], 295);
  }
  EXPECT_TRUE(nvtx_seen);
  // 59 steps each, all paired; the verdict's numbers are printed with it.
  EXPECT_EQ(d.doc["steps"].size(), 59u);
  const json& step = step_metric(d.doc);
  EXPECT_EQ(step["change"]["baseline_steps"]["count"], 59);
  EXPECT_EQ(step["change"]["candidate_steps"]["count"], 59);
  std::printf("sc22 baseline -> bucketcap100mb: step time %s, %+.2f %%, p = %.3g\n",
              verdict_of(step).c_str(), change_of(step), step["change"]["p_value"].get<double>());
}

TEST(Diff, NoBroadcastKeepsEveryAllReduce) {
  NEED_GPU_REPORTS();
  const Diff d = diff({unpacked("nersc-sc22-ddp", "4gpu_baseline.nsys2022.4.sqlite").string(),
                       unpacked("nersc-sc22-ddp", "4gpu_nobroadcast.nsys2022.4.sqlite").string()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(kernel_total_count(d.doc, "baseline", "AllReduce"), 472);
  EXPECT_EQ(kernel_total_count(d.doc, "candidate", "AllReduce"), 472);
}

TEST(Diff, TheFixedMfuRunDoesFewerSendRecvsAndHasNoStepsToJudge) {
  NEED_GPU_REPORTS();
  const fs::path before = unpacked("nsys-ai", "mfu_2gpu_before.sqlite");
  const fs::path after = unpacked("nsys-ai", "mfu_2gpu_after.sqlite");
  const Diff d = diff({before.string(), after.string()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(count_of(kernel_counts(before), "SendRecv"), 66);
  EXPECT_EQ(count_of(kernel_counts(after), "SendRecv"), 62);
  EXPECT_EQ(kernel_total_count(d.doc, "baseline", "SendRecv"), 66);
  EXPECT_EQ(kernel_total_count(d.doc, "candidate", "SendRecv"), 62);
  // No "step N" ranges: nothing to judge the step time by, and it says so.
  EXPECT_EQ(verdict_of(step_metric(d.doc)), "inconclusive");
  EXPECT_NE(step_metric(d.doc)["change"]["reason"].get<std::string>(), "");
  EXPECT_FALSE(d.doc.at("nvtx").empty());
}

TEST(Diff, TheSameRunIsUnchangedEverywhere) {
  NEED_GPU_REPORTS();
  const fs::path base = unpacked("nersc-sc22-ddp", "4gpu_baseline.nsys2022.4.sqlite");
  const fs::path copy = temp() / "same" / "4gpu_baseline.sqlite";
  fs::create_directories(copy.parent_path());
  fs::copy_file(base, copy, fs::copy_options::overwrite_existing);
  const Diff d = diff({"--gate", "0", base.string(), copy.string()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  for (const json& m : d.doc["metrics"]) {
    EXPECT_EQ(verdict_of(m), "unchanged") << m["name"];
    EXPECT_EQ(change_of(m), 0) << m["name"];
  }
  for (const json& k : d.doc["kernels"]) EXPECT_EQ(k["count_change"], 0) << k["name"];
}

TEST(Diff, EveryTimeStretchedByTenPercentIsSlowerByTenPercentAndFailsTheGate) {
  NEED_GPU_REPORTS();
  const fs::path base = unpacked("nersc-sc22-ddp", "4gpu_baseline.nsys2022.4.sqlite");
  const fs::path slow = stretched_copy(base, temp() / "slow" / "4gpu_baseline.sqlite", 1100);
  const Diff d = diff({base.string(), slow.string()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const json& step = step_metric(d.doc);
  EXPECT_EQ(verdict_of(step), "slower");
  EXPECT_NEAR(change_of(step), 10.0, 0.01);
  EXPECT_LT(step["change"]["p_value"].get<double>(), 0.01);
  // Gate: 5 % is exceeded (exit 3), 15 % is not; faster the other way round never fails it.
  EXPECT_EQ(diff({"--gate", "5", base.string(), slow.string()}).exit_code, 3);
  EXPECT_EQ(diff({"--gate", "15", base.string(), slow.string()}).exit_code, 0);
  const Diff back = diff({"--gate", "0", slow.string(), base.string()});
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(verdict_of(step_metric(back.doc)), "faster");
}

TEST(Diff, OneSlowRankOfFourIsOutOfLineWhileTheJobIsUnchanged) {
  NEED_GPU_REPORTS();
  const fs::path base = four_ranks("ranks-base", {1000, 1000, 1000, 1000});
  const fs::path cand = four_ranks("ranks-one-slow", {1000, 1000, 1200, 1000});
  const Diff d = diff({base.string(), cand.string()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(verdict_of(step_metric(d.doc)), "unchanged");
  ASSERT_EQ(d.doc["pairs"].size(), 4u);
  for (const json& p : d.doc["pairs"]) {
    const bool slow = p["key"].get<std::string>().find("r2") != std::string::npos;
    EXPECT_EQ(p["paired_by"], "identity");
    EXPECT_EQ(p["out_of_line"].get<bool>(), slow) << p["key"];
    EXPECT_EQ(p["step"]["verdict"], slow ? "slower" : "unchanged") << p["key"];
  }
}

TEST(Diff, ARankSlowerWhileTheOthersGotFasterIsOutOfLine) {
  NEED_GPU_REPORTS();
  const fs::path base = four_ranks("ranks-base", {1000, 1000, 1000, 1000});
  const fs::path cand = four_ranks("ranks-mixed", {900, 900, 1100, 900});
  const Diff d = diff({base.string(), cand.string()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(verdict_of(step_metric(d.doc)), "faster");
  EXPECT_NEAR(change_of(step_metric(d.doc)), -10.0, 0.01);
  for (const json& p : d.doc["pairs"]) {
    const bool odd = p["key"].get<std::string>().find("r2") != std::string::npos;
    EXPECT_EQ(p["out_of_line"].get<bool>(), odd) << p["key"];
    EXPECT_EQ(p["step"]["verdict"], odd ? "slower" : "faster") << p["key"];
  }
}

TEST(Diff, CsvFilesAndTheHtmlPageInHeadlessChromium) {
  NEED_GPU_REPORTS();
  const fs::path base = four_ranks("ranks-base", {1000, 1000, 1000, 1000});
  const fs::path cand = four_ranks("ranks-mixed", {900, 900, 1100, 900});
  const fs::path out = temp() / "outputs";
  const Diff d = diff({"--csv", (out / "csv").string(), "--html", (out / "diff.html").string(),
                       base.string(), cand.string()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  for (const char* file : {"diff_metrics.csv", "diff_steps.csv", "diff_ranks.csv",
                           "diff_kernels.csv", "diff_nvtx.csv", "diff_unpaired.csv"}) {
    EXPECT_TRUE(fs::is_regular_file(out / "csv" / file)) << file;
  }
  // One line per kernel and a header.
  const std::string kernels = nsel::test::slurp(out / "csv" / "diff_kernels.csv");
  std::size_t lines = 0;
  for (char c : kernels) lines += c == '\n';
  EXPECT_GE(lines, d.doc["kernels"].size() + 1);
  const nsel::test::DrawnDiffPage page =
      nsel::test::draw_diff_in_chromium(out / "diff.html", temp() / "chromium-profile");
  EXPECT_EQ(page.verdict, "faster");
  EXPECT_EQ(page.bars.size(), 4u);
  for (const auto& [key, bar] : page.bars) {
    EXPECT_EQ(bar.out_of_line, key.find("r2") != std::string::npos) << key;
    EXPECT_EQ(bar.change > 0, key.find("r2") != std::string::npos) << key;
  }
  EXPECT_LE(page.page_width, page.window_width);
}

TEST(Diff, BadInputIsOneLineNamingTheFlagAndExitTwo) {
  const auto one = run({kNsel, "diff", "a"}, {});
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_EQ(one.err,
            "nsel: error: RUN: 1 paths given; expected exactly two (a report, export or folder "
            "per run), or --baseline PATH and --candidate PATH\n");
  const auto gate = run({kNsel, "diff", "--gate", "five", "a", "b"}, {});
  EXPECT_EQ(gate.exit_code, 2);
  EXPECT_EQ(gate.err,
            "nsel: error: --gate='five': not a number; expected a percentage >= 0, e.g. 5 (fail "
            "when the step time is slower by more)\n");
  const auto pair = run({kNsel, "diff", "--pair-by", "pid", "a", "b"}, {});
  EXPECT_EQ(pair.exit_code, 2);
  EXPECT_NE(pair.err.find("--pair-by='pid'"), std::string::npos) << pair.err;
  const fs::path empty = temp() / "empty";
  fs::create_directories(empty);
  const auto none = run({kNsel, "diff", empty.string(), empty.string()}, {});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err,
            "nsel: error: baseline: no reports (.nsys-rep) or exports (.sqlite) found "
            "under '" +
                empty.string() + "'\n");
}

}  // namespace
