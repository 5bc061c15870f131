// Summaries, comparisons and report discovery of `nsel report`, on small inputs with known
// answers. The real-nsys golden tests are in report_test.cpp; the GPU tables can only be tested
// here, on a hand-built SQLite file that stands in for the export of a GPU report.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "analyze/duration_stats.hpp"
#include "exact_stats.hpp"
#include "nsel/analyze/comparison.hpp"
#include "nsel/analyze/summary.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/reports/report_files.hpp"
#include "nsel/reports/report_identity.hpp"
#include "nsel/sys/files.hpp"
#include "unit_files.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& label) {
  return nsel::test::fresh_dir("analyze", label);
}

void execute(const fs::path& db_path, const std::string& sql) {
  nsel::test::execute_sql(db_path, sql);
}

// The exact answer, the slow way.
nsel::DurationStats brute_force(std::vector<std::int64_t> v) {
  return nsel::test::exact_stats(v);
}

}  // namespace

TEST(GroupedDurations, ExactStatisticsBeyondTheInMemoryBuffer) {
  // 300,000 values (more than the in-memory buffer, so most go through the temporary file)
  // in groups of very different shapes; keys 3 and 4 are one group, as equal names are.
  std::mt19937_64 random(7);
  std::vector<std::vector<std::int64_t>> groups(5);
  nsel::analyze::GroupedDurations durations;
  const std::vector<std::uint32_t> group_of_key = {0, 1, 2, 3, 3, 4};
  for (int i = 0; i < 300000; ++i) {
    const std::uint32_t key = static_cast<std::uint32_t>(random() % 6);
    std::int64_t value = 0;
    switch (key) {
      case 0:
        value = static_cast<std::int64_t>(random() % 1000);
        break;  // narrow
      case 1:
        value = static_cast<std::int64_t>(random() % 2000000000000LL);
        break;  // wide
      case 2:
        value = 42;
        break;  // constant
      case 3:
        value = static_cast<std::int64_t>(random() % 50);
        break;
      case 4:
        value = 1000000 + static_cast<std::int64_t>(random() % 7);
        break;  // many equal
      default:
        value = static_cast<std::int64_t>(random() % 100000);
        break;
    }
    if (key == 5 && groups[4].size() >= 11) continue;  // a small group: 11 values
    groups[group_of_key[key]].push_back(value);
    durations.add(key, value);
  }
  const auto stats = durations.finish(group_of_key, groups.size());
  ASSERT_EQ(stats.size(), groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const nsel::DurationStats want = brute_force(groups[g]);
    EXPECT_EQ(stats[g].count, want.count) << g;
    EXPECT_EQ(stats[g].total, want.total) << g;
    EXPECT_EQ(stats[g].min, want.min) << g;
    EXPECT_EQ(stats[g].max, want.max) << g;
    EXPECT_EQ(stats[g].median, want.median) << g;
    EXPECT_DOUBLE_EQ(stats[g].mean, want.mean) << g;
    EXPECT_NEAR(stats[g].stddev, want.stddev, want.stddev * 1e-9 + 1e-9) << g;
  }
}

TEST(GroupedDurations, EvenCountMedianIsTheMeanOfTheMiddleTwo) {
  nsel::analyze::GroupedDurations durations;
  for (std::int64_t v : {10, 40, 20, 30}) durations.add(0, v);
  const auto stats = durations.finish(std::vector<std::uint32_t>{0}, 1);
  EXPECT_EQ(stats[0].median, 25.0);
  EXPECT_EQ(stats[0].stddev, std::sqrt(500.0 / 3.0));
}

TEST(StepNamePattern, MatchesTheNumberInItsPlace) {
  const nsel::StepNamePattern plain;
  EXPECT_EQ(plain.match("step 12"), 12);
  EXPECT_EQ(plain.match("step 2 fwd"), std::nullopt);
  EXPECT_EQ(plain.match("step "), std::nullopt);
  EXPECT_EQ(plain.match("steps 2"), std::nullopt);
  const nsel::StepNamePattern custom("train_step_{n}/loop");
  EXPECT_EQ(custom.match("train_step_7/loop"), 7);
  EXPECT_EQ(custom.match("train_step_7"), std::nullopt);
}

TEST(StepNamePattern, RejectsAPatternWithoutOneNumberPlace) {
  try {
    nsel::StepNamePattern bad("step", "--step-name");
    FAIL();
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--step-name='step': the step number's place \"{n}\" must appear once; expected an "
              "NVTX range name with {n} where the step number goes, for example 'step {n}' or "
              "'train_step_{n}'");
    EXPECT_EQ(e.exit_code(), 2);
  }
  EXPECT_THROW(nsel::StepNamePattern("{n}{n}"), nsel::Error);
}

TEST(RoundLikeSqlite, HalvesGoAwayFromZero) {
  EXPECT_EQ(nsel::round_like_sqlite(1234.25, 1), 1234.3);
  EXPECT_EQ(nsel::round_like_sqlite(0.05, 1), 0.1);
  EXPECT_EQ(nsel::round_like_sqlite(7.75, 1), 7.8);
}

TEST(Summary, MissingTablesMeanNoDataAndRowsOutOfOrderAreSorted) {
  const fs::path dir = fresh_dir("tables");
  const fs::path empty = dir / "no_tables.sqlite";
  execute(empty, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);");
  const nsel::ProcessSummary none = nsel::summarize_export(empty, {});
  EXPECT_FALSE(none.has_nvtx);
  EXPECT_FALSE(none.has_gpu);
  EXPECT_FALSE(none.has_osrt);
  EXPECT_TRUE(none.steps.empty());

  // A future export: extra columns, no domain column, rows not in start order.
  const fs::path newer = dir / "newer.sqlite";
  execute(newer, R"(
    CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
      globalTid INTEGER, futureColumn TEXT);
    INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES
      (150, 180, 59, 'inner', 5), (100, 300, 59, 'step 1', 5), (120, 200, 59, 'forward', 5),
      (210, 290, 59, 'backward', 5), (220, 230, 59, 'inner', 5), (130, 140, 59, 'elsewhere', 6);
  )");
  const nsel::ProcessSummary s = nsel::summarize_export(newer, {});
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.steps[0].duration_ns(), 200);
  ASSERT_EQ(s.steps[0].shares.size(), 2u);
  EXPECT_EQ(s.steps[0].shares[0].range, "forward");
  EXPECT_EQ(s.steps[0].shares[0].ns, 80);
  EXPECT_EQ(s.steps[0].shares[1].range, "backward");
  EXPECT_EQ(s.steps[0].shares[1].ns, 80);
  ASSERT_EQ(s.nvtx.size(), 5u);
  EXPECT_EQ(s.nvtx[0].name, "step 1");

  const fs::path junk = dir / "junk.sqlite";
  std::ofstream(junk) << "not a database at all, just some text that is long enough";
  try {
    nsel::summarize_export(junk, {});
    FAIL();
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "'" + junk.string() + "': not a SQLite export (file is not a database)");
    EXPECT_EQ(e.exit_code(), 1);
  }
  fs::remove_all(dir);
}

TEST(Summary, ATableWithoutRowidsIsReadInOneRun) {
  const fs::path dir = fresh_dir("without_rowid");
  const fs::path db = dir / "without_rowid.sqlite";
  execute(db, R"(
    CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL PRIMARY KEY, end INTEGER,
      eventType INTEGER NOT NULL, text TEXT, globalTid INTEGER) WITHOUT ROWID;
    INSERT INTO NVTX_EVENTS VALUES (100, 300, 59, 'step 1', 5), (120, 200, 59, 'forward', 5),
      (300, 450, 59, 'step 2', 5), (310, 400, 59, 'forward', 5);
  )");
  nsel::SummaryOptions two;
  two.threads = 2;  // would read in two runs of rowids, which this table has none of
  const nsel::ProcessSummary s = nsel::summarize_export(db, two);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[1].duration_ns(), 150);
  ASSERT_EQ(s.steps[1].shares.size(), 1u);
  EXPECT_EQ(s.steps[1].shares[0].ns, 90);
  fs::remove_all(dir);
}

TEST(CompareSteps, SlowestAndStragglersAgainstTheMedian) {
  std::vector<nsel::ProcessSummary> processes(4);
  const long long times[4][2] = {{100, 200}, {105, 200}, {130, 205}, {100, 0}};
  for (int p = 0; p < 4; ++p) {
    processes[p].identity.worker = "w" + std::to_string(p);
    for (int s = 0; s < 2; ++s) {
      if (times[p][s] == 0) continue;  // w3 has no step 2
      nsel::StepSummary step;
      step.step = s + 1;
      step.start_ns = 1000;
      step.end_ns = 1000 + times[p][s];
      processes[p].steps.push_back(step);
    }
  }
  const nsel::StepComparison c = nsel::compare_steps(processes, 10);
  ASSERT_EQ(c.steps.size(), 2u);
  EXPECT_EQ(c.steps[0].median_ns, 102.5);
  EXPECT_EQ(c.steps[0].slowest, 2u);
  EXPECT_EQ(c.steps[0].stragglers, std::vector<std::size_t>{2});
  EXPECT_FALSE(c.steps[1].duration_ns[3].has_value());
  EXPECT_EQ(c.steps[1].median_ns, 200);
  EXPECT_EQ(c.steps[1].slowest, 2u);
  EXPECT_TRUE(c.steps[1].stragglers.empty());  // 2.5 % above: under the threshold
  EXPECT_EQ(nsel::compare_steps(processes, 1).steps[1].stragglers, std::vector<std::size_t>{2});
}

// With two ranks each is judged against the other: a rank 35 % slower is 35 % above (against
// the median of both it would be 14.9 % above, and a 20 % threshold would miss it).
TEST(CompareSteps, TwoRanksAreEachJudgedAgainstTheOther) {
  std::vector<nsel::ProcessSummary> processes(2);
  for (int p = 0; p < 2; ++p) {
    nsel::StepSummary step;
    step.step = 1;
    step.end_ns = p == 0 ? 1000 : 1350;
    processes[p].steps.push_back(step);
  }
  const nsel::StepComparison c = nsel::compare_steps(processes, 20);
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_EQ(c.steps[0].median_ns, 1175);
  EXPECT_DOUBLE_EQ(*c.steps[0].percent_above_others[1], 35.0);
  EXPECT_NEAR(*c.steps[0].percent_above_others[0], -25.93, 0.01);
  EXPECT_EQ(c.steps[0].stragglers, std::vector<std::size_t>{1});
  // One process alone has no others: never a straggler.
  processes.pop_back();
  const nsel::StepComparison alone = nsel::compare_steps(processes, 0);
  EXPECT_FALSE(alone.steps[0].percent_above_others[0].has_value());
  EXPECT_TRUE(alone.steps[0].stragglers.empty());
}

// Every rank's step lasts until the last one arrives at the all-reduce, so step times are
// alike; the straggler is the rank the others wait for. The old rule judged step time and found
// none here while the demo, by a rule of its own, named rank 1.
TEST(CompareSteps, TheRankTheOthersWaitForInACommunicationRangeIsTheStraggler) {
  std::vector<nsel::ProcessSummary> processes(3);
  const long long compute[3] = {100, 150, 102};
  for (int p = 0; p < 3; ++p) {
    processes[p].identity.worker = "w";
    processes[p].identity.rank = p;
    for (int s = 1; s <= 3; ++s) {
      nsel::StepSummary step;
      step.step = s;
      step.start_ns = s * 1000;
      step.end_ns = step.start_ns + 160;  // alike: every rank leaves the all-reduce together
      const long long own = s == 3 ? 100 : compute[p];  // in step 3 nobody is slow
      step.shares = {{"forward", own, step.start_ns}, {"all-reduce", 160 - own, step.start_ns}};
      processes[p].steps.push_back(step);
    }
  }
  const nsel::StepComparison c = nsel::compare_steps(processes, 10);
  ASSERT_EQ(c.steps.size(), 3u);
  EXPECT_EQ(c.communication_ranges, std::vector<std::string>{"all-reduce"});
  EXPECT_EQ(c.steps[0].work_ns[1], 150);
  EXPECT_EQ(c.steps[0].others_median_ns[1], 101.0);
  EXPECT_EQ(c.steps[0].stragglers, std::vector<std::size_t>{1});
  EXPECT_EQ(c.steps[1].stragglers, std::vector<std::size_t>{1});
  EXPECT_TRUE(c.steps[2].stragglers.empty());
  ASSERT_TRUE(c.straggler.has_value());
  EXPECT_EQ(c.straggler->process, 1u);
  EXPECT_EQ(c.straggler->slow_steps, 2u);
  EXPECT_EQ(c.straggler->steps, 3u);
  EXPECT_NEAR(c.straggler->mean_percent_above_others, 100.0 * 49.0 / 101.0, 1e-9);
}

// The page's GPU band: medians across processes of each step's busy and communication shares
// and of the communication wait, made with the comparison (render only draws them).
TEST(CompareSteps, GpuMediansAcrossProcesses) {
  std::vector<nsel::ProcessSummary> processes(3);
  const long long busy[3] = {500, 800, 900};
  const long long talk[3] = {100, 200, 400};
  for (int p = 0; p < 3; ++p) {
    nsel::StepSummary step;
    step.step = 1;
    step.end_ns = 1000;
    step.gpu_busy_ns = busy[p];
    step.communication_ns = talk[p];
    processes[p].steps.push_back(step);
  }
  const nsel::StepComparison c = nsel::compare_steps(processes, 10);
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(*c.steps[0].median_gpu_busy_share, 0.8);
  EXPECT_DOUBLE_EQ(*c.steps[0].median_communication_share, 0.2);
  EXPECT_DOUBLE_EQ(*c.steps[0].median_communication_wait_ns, 100);  // waits 0, 100, 300
  processes[1].steps[0].gpu_busy_ns.reset();
  processes[1].steps[0].communication_ns.reset();
  const nsel::StepComparison two = nsel::compare_steps(processes, 10);
  EXPECT_DOUBLE_EQ(*two.steps[0].median_gpu_busy_share, 0.7);
}

TEST(CompareSteps, CommunicationRangesAreCollectivesByName) {
  for (const char* name : {"all-reduce", "AllReduce", "nccl all_gather", "reduce_scatter grads",
                           "all_to_all", "Broadcast params", "dist.barrier"}) {
    EXPECT_TRUE(nsel::is_communication_range(name)) << name;
  }
  for (const char* name : {"forward", "backward", "optimizer step", "reduce", "all"}) {
    EXPECT_FALSE(nsel::is_communication_range(name)) << name;
  }
}

TEST(FindReportFiles, WalksFoldersAndSkipsCachedExports) {
  const fs::path dir = fresh_dir("find");
  fs::create_directories(dir / "session_1/logs/nsight");
  const fs::path a = dir / "session_1/logs/nsight/dtensor_policy_worker_2:4_11.nsys-rep";
  const fs::path a_export = dir / "session_1/logs/nsight/dtensor_policy_worker_2:4_11.sqlite";
  const fs::path b = dir / "worker_process_12.sqlite";
  for (const fs::path& f : {a, a_export, b, dir / "notes.txt"}) std::ofstream(f) << "x";
  const auto found = nsel::find_report_files({dir, a});
  EXPECT_EQ(found, (std::vector<fs::path>{a, b}));
  try {
    nsel::find_report_files({dir / "missing"});
    FAIL();
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "PATH='" + (dir / "missing").string() +
                  "': no such file or folder; expected a report (.nsys-rep), an export (.sqlite) "
                  "or a folder holding them");
    EXPECT_EQ(e.exit_code(), 2);
  }
  fs::remove_all(dir);
}

TEST(IdentifyReport, FromTheFileNameAndTheSyncedLayout) {
  const fs::path dir = fresh_dir("identity");
  const fs::path nested = dir / "ray/node-7/session_2026-01-01_00-00-00_000000_1/logs/nsight";
  fs::create_directories(nested);
  const auto id = nsel::identify_report(nested / "megatron_policy_worker_3:5_4242.nsys-rep");
  EXPECT_EQ(id.worker, "megatron_policy_worker");
  EXPECT_EQ(id.pid, 4242);
  ASSERT_TRUE(id.window.has_value());
  EXPECT_EQ(id.window->text(), "3:5");
  EXPECT_EQ(id.node, "node-7");
  EXPECT_EQ(id.label(), "megatron_policy_worker/4242");
  EXPECT_EQ(nsel::identify_report(dir / "worker_process_9.sqlite").label(), "worker_process/9");
  EXPECT_EQ(nsel::identify_report(dir / "other.nsys-rep").label(), "other");

  fs::remove_all(dir);
}

nsel::Manifest manifest_of(const std::string& worker, const std::string& window, long long pid) {
  nsel::Manifest m;
  m.worker = worker;
  m.step_window = window;
  m.pid = pid;
  m.host = "gpu-node-2";
  m.state = "complete";
  return m;
}

TEST(IdentifyReport, FromTheManifestNselExecWrote) {
  const fs::path dir = fresh_dir("identity-manifest");
  // A name that says nothing: everything comes from "<stem>.nsel.json".
  nsel::Manifest m = manifest_of("dtensor_policy_worker", "2:4", 4250);
  m.rank_variables = {{"LOCAL_RANK", "0"}, {"SLURM_PROCID", "5"}, {"RANK", "3"}};
  nsel::write_file_atomically(dir / "profile.nsel.json", nsel::serialize_manifest(m));
  for (const char* name : {"profile.nsys-rep", "profile.sqlite"}) {
    const auto id = nsel::identify_report(dir / name);
    EXPECT_EQ(id.worker, "dtensor_policy_worker") << name;
    EXPECT_EQ(id.pid, 4250) << name;
    EXPECT_EQ(id.rank, 3) << name;  // RANK before SLURM_PROCID
    EXPECT_EQ(id.node, "gpu-node-2") << name;
    ASSERT_TRUE(id.window.has_value()) << name;
    EXPECT_EQ(id.window->text(), "2:4") << name;
  }
  // Without RANK, the launchers' own variables, in order; a value that is no number is skipped.
  m.rank_variables = {{"RANK", "x"}, {"OMPI_COMM_WORLD_RANK", "7"}, {"PMI_RANK", "8"}};
  nsel::write_file_atomically(dir / "profile.nsel.json", nsel::serialize_manifest(m));
  EXPECT_EQ(nsel::identify_report(dir / "profile.nsys-rep").rank, 7);
  m.rank_variables = {{"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}};
  nsel::write_file_atomically(dir / "profile.nsel.json", nsel::serialize_manifest(m));
  EXPECT_FALSE(nsel::identify_report(dir / "profile.nsys-rep").rank.has_value());

  // Numbered reports of repeated windows share "<stem>.nsel.json"; the file name's window stays
  // when the manifest holds several.
  nsel::write_file_atomically(dir / "w_1_3.nsel.json",
                              nsel::serialize_manifest(manifest_of("w", "2:4,10:12", 3)));
  const auto numbered = nsel::identify_report(dir / "w_1_3.2.nsys-rep");
  EXPECT_EQ(numbered.worker, "w");
  EXPECT_EQ(numbered.pid, 3);
  EXPECT_FALSE(numbered.window.has_value());

  // The synced layout's node folder wins over the host, as in `nsel ls`.
  const fs::path nested = dir / "ray/node-7/session_2026-01-01_00-00-00_000000_1/logs/nsight";
  fs::create_directories(nested);
  nsel::write_file_atomically(nested / "w_2:4_9.nsel.json",
                              nsel::serialize_manifest(manifest_of("w", "2:4", 9)));
  EXPECT_EQ(nsel::identify_report(nested / "w_2:4_9.nsys-rep").node, "node-7");

  // An unreadable manifest, or the old provisional "<report>.json", is ignored.
  std::ofstream(dir / "worker_process_9.nsel.json") << "{ not json";
  std::ofstream(dir / "worker_process_9.json") << R"({"rank": 3, "node": "gpu-node-2"})";
  const auto ignored = nsel::identify_report(dir / "worker_process_9.nsys-rep");
  EXPECT_EQ(ignored.label(), "worker_process/9");
  EXPECT_FALSE(ignored.rank.has_value());
  EXPECT_EQ(ignored.node, "");
  fs::remove_all(dir);
}

TEST(FindReportFiles, ManifestsAreNeverReports) {
  const fs::path dir = fresh_dir("find-manifests");
  const fs::path report = dir / "w_2:4_11.nsys-rep";
  std::ofstream(report) << "x";
  nsel::write_file_atomically(dir / "w_2:4_11.nsel.json",
                              nsel::serialize_manifest(manifest_of("w", "2:4", 11)));
  EXPECT_EQ(nsel::find_report_files({dir}), std::vector<fs::path>{report});
  try {
    nsel::find_report_files({dir / "w_2:4_11.nsel.json"});
    FAIL();
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "PATH='" + (dir / "w_2:4_11.nsel.json").string() +
                  "': a manifest (.nsel.json), not a report; expected a report (.nsys-rep), an "
                  "export (.sqlite) or a folder holding them");
    EXPECT_EQ(e.exit_code(), 2);
  }
  fs::remove_all(dir);
}

// Ray's session_latest links to a session folder: its reports count once, whether the link is
// met inside a root or given as a root beside the real folder.
TEST(FindReportFiles, SessionLatestCountsOnce) {
  const fs::path dir = fresh_dir("find-latest");
  const fs::path session = dir / "session_2026-01-01_00-00-00_000000_1";
  fs::create_directories(session / "logs/nsight");
  const fs::path report = session / "logs/nsight/w_2:4_11.nsys-rep";
  std::ofstream(report) << "x";
  fs::create_directory_symlink(session.filename(), dir / "session_latest");
  EXPECT_EQ(nsel::find_report_files({dir}), std::vector<fs::path>{report});
  EXPECT_EQ(nsel::find_report_files({dir, dir / "session_latest"}).size(), 1u);
  EXPECT_EQ(nsel::find_report_files({dir / "session_latest", dir}).size(), 1u);
  EXPECT_EQ(nsel::find_report_files({dir / "session_latest"}),
            std::vector<fs::path>{dir / "session_latest/logs/nsight/w_2:4_11.nsys-rep"});
  fs::remove_all(dir);
}

// Reading a large NVTX table in several runs of rows at once gives exactly what one run gives,
// with steps, and ranges inside them, crossing the boundaries between runs.
TEST(Summary, ParallelRunsOfRowsAgreeWithOneRun) {
  const fs::path dir = fresh_dir("chunks");
  const fs::path db = dir / "many_ranges.sqlite";
  std::string sql =
      "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
      "INSERT INTO StringIds VALUES (1, 'forward'), (2, 'layer'), (3, 'backward');"
      "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT "
      "NULL, text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER);"
      "INSERT INTO NVTX_EVENTS VALUES (0, NULL, 75, 'io', 1, NULL, 1);"
      "BEGIN;";
  long long t = 10;
  std::mt19937 random(3);
  for (int step = 1; step <= 6; ++step) {
    std::string rows;
    const long long step_start = t;
    std::string inner;
    for (int phase = 0; phase < 2; ++phase) {
      const long long phase_start = ++t;
      for (int i = 0; i < 15000; ++i) {
        const long long a = ++t;
        t += 1 + static_cast<long long>(random() % 50);
        inner += "(" + std::to_string(a) + "," + std::to_string(t) + ",59,NULL,1,2,0),";
      }
      // Parents are stored before their children (rows are in start order).
      rows += "(" + std::to_string(phase_start) + "," + std::to_string(++t) + ",59,NULL,1," +
              (phase == 0 ? "1" : "3") + ",0)," + inner;
      inner.clear();
    }
    rows += "(" + std::to_string(t - 5) + "," + std::to_string(t - 2) + ",59,'save',1,NULL,1),";
    const long long step_end = ++t + (step == 6 ? 0 : 0);
    const std::string step_row = "(" + std::to_string(step_start) + "," +
                                 (step == 6 ? "NULL" : std::to_string(step_end)) + ",59,'step " +
                                 std::to_string(step) + "',1,NULL,0),";
    rows = step_row + rows;
    rows.back() = ';';
    sql += "INSERT INTO NVTX_EVENTS VALUES " + rows;
  }
  sql += "COMMIT;";
  execute(db, sql);

  nsel::SummaryOptions one;
  nsel::SummaryOptions three;
  three.threads = 3;
  const nsel::ProcessSummary a = nsel::summarize_export(db, one);
  const nsel::ProcessSummary b = nsel::summarize_export(db, three);
  ASSERT_EQ(a.steps.size(), 6u);
  ASSERT_EQ(b.steps.size(), 6u);
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].start_ns, b.steps[i].start_ns);
    EXPECT_EQ(a.steps[i].end_ns, b.steps[i].end_ns);
    ASSERT_EQ(a.steps[i].shares.size(), 2u) << i;
    ASSERT_EQ(b.steps[i].shares.size(), 2u) << i;
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(a.steps[i].shares[k].range, b.steps[i].shares[k].range);
      EXPECT_EQ(a.steps[i].shares[k].ns, b.steps[i].shares[k].ns);
    }
  }
  EXPECT_EQ(a.steps[0].shares[0].range, "forward");
  ASSERT_EQ(a.nvtx.size(), b.nvtx.size());
  for (std::size_t i = 0; i < a.nvtx.size(); ++i) {
    EXPECT_EQ(a.nvtx[i].name, b.nvtx[i].name);
    EXPECT_EQ(a.nvtx[i].stats.count, b.nvtx[i].stats.count);
    EXPECT_EQ(a.nvtx[i].stats.total, b.nvtx[i].stats.total);
    EXPECT_EQ(a.nvtx[i].stats.median, b.nvtx[i].stats.median);
    EXPECT_NEAR(a.nvtx[i].stats.stddev, b.nvtx[i].stats.stddev, 1e-6 * a.nvtx[i].stats.stddev);
  }
  EXPECT_EQ(a.nvtx[0].name, "layer");
  EXPECT_EQ(a.nvtx[0].stats.count, 6 * 2 * 15000);
  bool domain = false;
  for (const auto& row : a.nvtx) domain |= row.name == "io:save";
  EXPECT_TRUE(domain);
  fs::remove_all(dir);
}

// Random nesting on four threads, with steps at the top or one level down, ranges left open,
// registered names and a named domain: however the table is split into runs of rows read at
// once, the steps, their top-level ranges and the NVTX summary are those of the ranges' true
// parents, worked out here as the ranges are made.
TEST(Summary, RunsOfRowsNestRangesAsTheirTrueParents) {
  struct Range {
    long long start;
    long long end;  // -1 while open
    long long tid;
    std::string name;
    long long parent;  // index, -1 for none
  };
  const long long pid_bits = 4242LL << 24;  // one process, three threads
  std::vector<Range> ranges;
  std::mt19937 random(11);
  const std::vector<std::string> names = {"forward", "layer", "backward", "save"};
  long long t_end = 0;
  for (long long thread = 0; thread < 3; ++thread) {
    const long long tid = pid_bits + thread;
    std::vector<long long> open;
    long long t = 100 + thread;
    int step = 0;
    for (int made = 0; made < 70000;) {
      t += 1 + static_cast<long long>(random() % 3);
      // Long steps (a step's own ranges rarely end it), so that every boundary between runs
      // of rows falls inside some; now and then a step one level down, or a plain top range.
      const bool push = open.empty() || (open.size() == 1 ? random() % 400 != 0
                                                          : open.size() < 7 && random() % 2 == 0);
      if (push) {
        const bool is_step =
            open.empty() ? random() % 4 != 0 : open.size() == 1 && random() % 100 == 0;
        const std::string name = is_step ? "step " + std::to_string(++step)
                                         : names[static_cast<std::size_t>(random() % 4)];
        open.push_back(static_cast<long long>(ranges.size()));
        ranges.push_back({t, -1, tid, name, open.size() > 1 ? open[open.size() - 2] : -1});
        ++made;
      } else {
        ranges[static_cast<std::size_t>(open.back())].end = t;
        open.pop_back();
      }
    }
    for (std::size_t left = open.size(); left > 2; --left) {  // the outer two stay open
      t += 2;
      ranges[static_cast<std::size_t>(open.back())].end = t;
      open.pop_back();
    }
    t_end = std::max(t_end, t);
  }
  // A fourth thread: one step open from the first event to the last, with short ranges all
  // along (more in each later run than a run keeps in memory before using the disk), the last
  // one still open too.
  const long long lone = static_cast<long long>(ranges.size());
  ranges.push_back({50, -1, pid_bits + 3, "step 0", -1});
  for (long long at = 60; at + 10 < t_end - 100; at += 23) {
    ranges.push_back({at, at + 10, pid_bits + 3, names[static_cast<std::size_t>(at % 4)], lone});
  }
  ranges.push_back({t_end - 50, -1, pid_bits + 3, "tail", lone});
  std::vector<std::size_t> order(ranges.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return ranges[a].start < ranges[b].start; });

  const fs::path dir = fresh_dir("nesting");
  const fs::path db = dir / "nesting.sqlite";
  std::string sql =
      "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
      "INSERT INTO StringIds VALUES (1, 'forward'), (2, 'layer');"
      "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT "
      "NULL, text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER);"
      "BEGIN;"
      "INSERT INTO NVTX_EVENTS VALUES (0, NULL, 75, 'io', " +
      std::to_string(pid_bits) + ", NULL, 7);";
  long long last_time = 0;
  for (std::size_t i : order) {
    const Range& r = ranges[i];
    last_time = std::max(last_time, std::max(r.start, r.end));
    const std::string text_id = r.name == "forward" ? "1" : r.name == "layer" ? "2" : "NULL";
    sql += "INSERT INTO NVTX_EVENTS VALUES (" + std::to_string(r.start) + "," +
           (r.end < 0 ? "NULL" : std::to_string(r.end)) + ",59," +
           (text_id == "NULL" ? "'" + r.name + "'" : "NULL") + "," + std::to_string(r.tid) + "," +
           text_id + "," + (r.name == "save" ? "7" : "NULL") + ");";
  }
  sql += "COMMIT;";
  execute(db, sql);

  // The expected answers, from the true parents.
  const auto duration = [&](const Range& r) { return (r.end < 0 ? last_time : r.end) - r.start; };
  const auto is_step = [](const Range& r) { return r.name.rfind("step ", 0) == 0; };
  std::map<std::string, std::vector<std::int64_t>> durations;
  std::map<long long, std::vector<nsel::RangeShare>> shares;  // by the step's index
  for (std::size_t i : order) {
    const Range& r = ranges[i];
    const std::string shown = r.name == "save" ? "io:save" : r.name;  // as nvtxppsum names it
    durations[shown].push_back(duration(r));
    if (r.parent < 0 || is_step(r)) continue;
    const Range& parent = ranges[static_cast<std::size_t>(r.parent)];
    if (!is_step(parent)) continue;
    std::vector<nsel::RangeShare>& of_step = shares[r.parent];
    const auto same = std::find_if(of_step.begin(), of_step.end(),
                                   [&](const nsel::RangeShare& s) { return s.range == shown; });
    if (same == of_step.end()) {
      of_step.push_back({shown, duration(r), r.start});
    } else {
      same->ns += duration(r);
    }
  }

  for (unsigned threads : {1u, 2u, 3u, 4u}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    nsel::SummaryOptions options;
    options.threads = threads;
    const nsel::ProcessSummary summary = nsel::summarize_export(db, options);
    std::size_t step_at = 0;
    for (std::size_t i : order) {
      const Range& r = ranges[i];
      if (!is_step(r)) continue;
      ASSERT_LT(step_at, summary.steps.size());
      const nsel::StepSummary& step = summary.steps[step_at++];
      EXPECT_EQ(step.start_ns, r.start);
      EXPECT_EQ(step.end_ns, r.end < 0 ? last_time : r.end);
      const std::vector<nsel::RangeShare>& expected = shares[static_cast<long long>(i)];
      ASSERT_EQ(step.shares.size(), expected.size()) << r.name;
      for (std::size_t k = 0; k < expected.size(); ++k) {
        EXPECT_EQ(step.shares[k].range, expected[k].range);
        EXPECT_EQ(step.shares[k].ns, expected[k].ns);
        EXPECT_EQ(step.shares[k].first_start_ns, expected[k].first_start_ns);
      }
    }
    EXPECT_EQ(step_at, summary.steps.size());
    ASSERT_EQ(summary.nvtx.size(), durations.size());
    for (const nsel::SummaryRow& row : summary.nvtx) {
      const auto found = durations.find(row.name);
      ASSERT_NE(found, durations.end()) << row.name;
      const nsel::DurationStats expected = brute_force(found->second);
      EXPECT_EQ(row.stats.count, expected.count) << row.name;
      EXPECT_EQ(row.stats.total, expected.total) << row.name;
      EXPECT_EQ(row.stats.min, expected.min) << row.name;
      EXPECT_EQ(row.stats.max, expected.max) << row.name;
      EXPECT_EQ(row.stats.median, expected.median) << row.name;
      EXPECT_NEAR(row.stats.stddev, expected.stddev, 1e-6 * expected.stddev) << row.name;
    }
  }
  fs::remove_all(dir);
}

// The rule on real names from the captures in ../shared/gpu-reports (sc22: ncclKernel_*,
// nsys-ai and ALCF: ncclDevKernel_*) and on the other libraries' forms.
TEST(CommunicationKernels, NcclRcclAndMscclKernelsAndNoOthers) {
  for (const char* name :
       {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm *, unsigned long, ncclWork *)",
        "ncclKernel_AllReduce_RING_LL_Sum_float", "ncclDevKernel_SendRecv(ncclDevComm *)",
        "ncclDevKernel_AllGather_RING_LL", "void ncclKernel_Broadcast_RING_LL_Sum_int8_t()",
        "void ns::ncclDevKernel_Generic()", "rcclKernel_AllReduce", "mscclKernel_Sum_float",
        "NCCLKernel"}) {
    EXPECT_TRUE(nsel::is_communication_kernel(name)) << name;
  }
  for (const char* name :
       {"", "gemm", "void multi_tensor_apply_kernel<TensorListMetadata<(int)4>, ncclFunctor>()",
        "sm80_xmma_fprop_implicit_gemm", "void at::native::elementwise_kernel<128, 4>()", "nccl",
        "void jacobi_kernel<32, 32>(float*, float const*, float*, int)"}) {
    EXPECT_EQ(nsel::is_communication_kernel(name), std::string(name) == "nccl") << name;
  }
}

// "data copy in 5" in step 5 and "data copy in 15" in step 15 are one range; a number that
// only contains the step's ("layer 150" in step 15) or another step's is left as it is.
TEST(Summary, RangesCarryingTheirStepsNumberAreOneRange) {
  const fs::path dir = fresh_dir("grouped");
  const fs::path db = dir / "grouped.sqlite";
  execute(db, R"(
    CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
      globalTid INTEGER);
    INSERT INTO NVTX_EVENTS VALUES
      (0, 1000, 59, 'step 5', 9), (0, 100, 59, 'data copy in 5', 9),
      (100, 600, 59, 'forward', 9),
      (1000, 2000, 59, 'step 15', 9), (1000, 1100, 59, 'data copy in 15', 9),
      (1100, 1200, 59, 'layer 150', 9), (1200, 1300, 59, 'data copy in 5', 9);
  )");
  const nsel::ProcessSummary s = nsel::summarize_export(db, {});
  ASSERT_EQ(s.steps.size(), 2u);
  std::vector<std::string> names[2];
  for (int i = 0; i < 2; ++i) {
    for (const nsel::RangeShare& r : s.steps[i].shares) names[i].push_back(r.range);
  }
  EXPECT_EQ(names[0], (std::vector<std::string>{"data copy in {n}", "forward"}));
  EXPECT_EQ(names[1],
            (std::vector<std::string>{"data copy in {n}", "layer 150", "data copy in 5"}));
  // The NVTX table itself keeps the names nsys shows.
  bool raw = false;
  for (const nsel::SummaryRow& r : s.nvtx) raw |= r.name == "data copy in 15";
  EXPECT_TRUE(raw);
  fs::remove_all(dir);
}

// A range that begins with its step on the same thread nests in it whichever row comes first.
TEST(Summary, RangesBeginningTogetherNestTheSameInAnyRowOrder) {
  const fs::path dir = fresh_dir("ties");
  for (const bool child_first : {false, true}) {
    const fs::path db = dir / (child_first ? "child_first.sqlite" : "parent_first.sqlite");
    const std::string step = "(0, 1000, 59, 'step 1', 9)";
    const std::string child = "(0, 500, 59, 'forward', 9)";
    execute(db,
            "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, "
            "text TEXT, globalTid INTEGER); INSERT INTO NVTX_EVENTS VALUES " +
                (child_first ? child + ", " + step : step + ", " + child) +
                ", (0, 300, 59, 'other thread', 8), (600, 700, 59, 'optimizer', 9);");
    const nsel::ProcessSummary s = nsel::summarize_export(db, {});
    ASSERT_EQ(s.steps.size(), 1u);
    ASSERT_EQ(s.steps[0].shares.size(), 2u) << child_first;
    EXPECT_EQ(s.steps[0].shares[0].range, "forward");
    EXPECT_EQ(s.steps[0].shares[0].ns, 500);
  }
  fs::remove_all(dir);
}
