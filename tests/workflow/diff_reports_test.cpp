// nsel diff's pipeline without the nsel binary: two folders of small SQLite exports summarised,
// compared, told in order and written out, with the run named in its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/workflow/diff_reports.hpp"
#include "unit_files.hpp"

namespace fs = std::filesystem;

namespace {

// An export of one process running steps 1..steps, each `step_ns` long with a `forward` range
// of half of it.
void write_export(const fs::path& file, int steps, long long step_ns) {
  std::string rows;
  for (int s = 1; s <= steps; ++s) {
    const long long start = 1000 + (s - 1) * (step_ns + 10);
    rows += std::string(rows.empty() ? "" : ", ") + "(" + std::to_string(start) + ", " +
            std::to_string(start + step_ns) + ", 59, 'step " + std::to_string(s) + "', 5), (" +
            std::to_string(start + 1) + ", " + std::to_string(start + 1 + step_ns / 2) +
            ", 59, 'forward', 5)";
  }
  nsel::test::execute_sql(file,
                          "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType "
                          "INTEGER, text TEXT, globalTid INTEGER); INSERT INTO NVTX_EVENTS "
                          "VALUES " +
                              rows + ";");
}

nsel::ReportRequest request_for(const fs::path& dir, const fs::path& cache) {
  nsel::ReportRequest r;
  r.paths = {dir};
  r.jobs = 1;
  r.cache_dir = cache;
  r.environment = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
  return r;
}

}  // namespace

TEST(DiffReports, ComparesBothRunsTellsInOrderAndWritesTheFiles) {
  const fs::path dir = nsel::test::fresh_dir("diff-reports", "runs");
  // Two ranks a run, named alike in both; the candidate's second rank is 20 % slower, and a
  // third rank only the candidate has is listed, not dropped.
  for (const char* worker : {"rank_a", "rank_b"}) {
    write_export(dir / "base" / (std::string(worker) + ".sqlite"), 8, 1000);
  }
  write_export(dir / "cand" / "rank_a.sqlite", 8, 1000);
  write_export(dir / "cand" / "rank_b.sqlite", 8, 1200);
  write_export(dir / "cand" / "rank_c.sqlite", 8, 1000);
  // Not an export at all: a failure of the candidate run, the rest still compared.
  std::ofstream(dir / "cand" / "broken.sqlite") << "not SQLite";

  nsel::DiffRequest request;
  request.baseline = request_for(dir / "base", dir / "cache");
  request.candidate = request_for(dir / "cand", dir / "cache");
  request.diff.pairing = nsel::parse_pairing_rule("worker");
  std::vector<std::string> told;
  nsel::DiffProgress progress;
  progress.summarising = [&](std::string_view side) { told.emplace_back(side); };
  progress.side.found = [&](std::size_t n) { told.push_back("found " + std::to_string(n)); };

  const nsel::RunDiff diff = nsel::diff_reports(request, progress);
  EXPECT_EQ(told, (std::vector<std::string>{"baseline", "found 2", "candidate", "found 4"}));
  EXPECT_EQ(diff.baseline.paths, std::vector<std::string>{(dir / "base").string()});
  EXPECT_EQ(diff.candidate.paths, std::vector<std::string>{(dir / "cand").string()});
  EXPECT_EQ(diff.baseline.processes, 2u);
  EXPECT_EQ(diff.candidate.processes, 3u);
  EXPECT_TRUE(diff.baseline.failures.empty());
  ASSERT_EQ(diff.candidate.failures.size(), 1u);
  EXPECT_EQ(diff.candidate.failures[0].report, dir / "cand" / "broken.sqlite");
  ASSERT_EQ(diff.pairs.size(), 2u);
  ASSERT_EQ(diff.unpaired.size(), 1u);
  EXPECT_EQ(diff.unpaired[0].side, "candidate");
  EXPECT_EQ(diff.unpaired[0].report, dir / "cand" / "rank_c.sqlite");
  // rank_b: every step 1000 -> 1200 ns; the job's per-step median of two ranks: 1000 -> 1100.
  for (const nsel::ProcessPairDiff& pair : diff.pairs) {
    const bool slow = pair.baseline.worker == "rank_b";
    EXPECT_EQ(pair.step.verdict,
              slow ? nsel::ChangeVerdict::slower : nsel::ChangeVerdict::unchanged)
        << pair.key;
  }
  EXPECT_EQ(diff.step_time().change.verdict, nsel::ChangeVerdict::slower);
  EXPECT_DOUBLE_EQ(diff.step_time().change.change_percent, 10.0);
  EXPECT_EQ(nsel::judge_gate(diff, 5).outcome, nsel::GateOutcome::regression);
  EXPECT_EQ(nsel::judge_gate(diff, 10).outcome, nsel::GateOutcome::passed);
  fs::remove_all(dir);
}

TEST(DiffReports, ARunWithoutReportsIsNamedInTheError) {
  const fs::path dir = nsel::test::fresh_dir("diff-reports", "empty");
  write_export(dir / "base" / "rank_a.sqlite", 8, 1000);
  fs::create_directories(dir / "cand");
  nsel::DiffRequest request;
  request.baseline = request_for(dir / "base", dir / "cache");
  request.candidate = request_for(dir / "cand", dir / "cache");
  try {
    nsel::diff_reports(request, {});
    ADD_FAILURE() << "no error";
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "candidate: no reports (.nsys-rep) or exports (.sqlite) found under '" +
                  (dir / "cand").string() + "'");
    EXPECT_EQ(e.exit_code(), 1);
  }
  fs::remove_all(dir);
}
