// nsel diff's outputs: the terminal summary, the JSON document and the CSV files, on made-up
// runs whose diff is known (see diff_test.cpp for the engine itself).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "nsel/render/diff.hpp"
#include "render/plain_tables.hpp"
#include "unit_files.hpp"

namespace fs = std::filesystem;

namespace {

// Step s of rank r: the step's own time (within +-3 % of 100 ms) plus r us, times `factor`
// for the ranks in `changed` (all when empty).
nsel::ReportSet run(std::size_t ranks, std::size_t steps, double factor,
                    const std::vector<long long>& changed = {}, long long first_pid = 100) {
  nsel::ReportSet set;
  for (std::size_t r = 0; r < ranks; ++r) {
    nsel::ProcessSummary p;
    p.identity.worker = "w";
    p.identity.rank = static_cast<long long>(r);
    p.identity.pid = first_pid + static_cast<long long>(r);
    p.report = "w_" + std::to_string(p.identity.pid) + ".nsys-rep";
    const bool scaled = changed.empty() || std::find(changed.begin(), changed.end(),
                                                     static_cast<long long>(r)) != changed.end();
    long long start = 0;
    for (std::size_t s = 1; s <= steps; ++s) {
      const double base =
          100e6 * (1 + 0.03 * std::sin(static_cast<double>(s))) + 1000.0 * static_cast<double>(r);
      nsel::StepSummary step;
      step.step = static_cast<long long>(s);
      step.start_ns = start;
      step.end_ns = start + std::llround(base * (scaled ? factor : 1.0));
      step.shares = {{"forward", (step.end_ns - step.start_ns) / 2, 0}};
      start = step.end_ns;
      p.steps.push_back(step);
    }
    set.processes.push_back(std::move(p));
  }
  std::sort(set.processes.begin(), set.processes.end(),
            [](const auto& a, const auto& b) { return a.identity.label() < b.identity.label(); });
  return set;
}

void add_kernels(nsel::ReportSet& set, long long count, double mean) {
  for (nsel::ProcessSummary& p : set.processes) {
    nsel::KernelRow k;
    k.name =
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "std::array<char*, 1> >(int, at::native::FillFunctor<float>, std::array<char*, 1>)";
    k.stats.count = count;
    k.stats.mean = mean;
    k.stats.total = std::llround(mean * static_cast<double>(count));
    k.stats.stddev = mean / 20;
    k.stats.min = std::llround(mean * 0.9);
    k.stats.max = std::llround(mean * 1.1);
    nsel::KernelRow nccl = k;
    nccl.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs)";
    nccl.communication = true;
    p.kernels = {k, nccl};
  }
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> file_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST(RenderDiff, TextVerdictFirstAndEveryRankWhenFew) {
  nsel::ReportSet baseline = run(8, 20, 1.0);
  nsel::ReportSet candidate = run(8, 20, 1.1, {}, 200);
  add_kernels(baseline, 472, 40'000);
  add_kernels(candidate, 295, 44'000);
  const nsel::RunDiff diff = nsel::diff_runs(baseline, candidate, {});
  const std::vector<std::string> lines = lines_of(nsel::render_diff_text(diff));
  ASSERT_FALSE(lines.empty());
  // The medians as the diff holds them, printed independently.
  const nsel::Change& step = diff.step_time().change;
  char expected[200];
  std::snprintf(expected, sizeof expected,
                "step time: slower by 10.0 %% (median %.1f ms -> %.1f ms, p < 0.0001, "
                "Mann-Whitney U over 20 steps per run)",
                step.baseline_steps.median / 1e6, step.candidate_steps.median / 1e6);
  EXPECT_EQ(lines[0], expected);
  const std::string text = nsel::render_diff_text(diff);
  for (int r = 0; r < 8; ++r) {
    EXPECT_NE(text.find("w rank " + std::to_string(r)), std::string::npos) << r;
  }
  EXPECT_EQ(text.find("more ranks in line"), std::string::npos);
  // Without "void ", namespaces, template and call arguments, in 33 columns; a "<...>" that
  // does not fit goes whole.
  EXPECT_NE(text.find("  vectorized_elementwise_kernel...\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  * ncclDevKernel_AllReduce_Sum_bf...\n"), std::string::npos) << text;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_LE(lines[i].size(), 100u) << lines[i];
  }
}

TEST(RenderDiff, TextFoldsManyRanksToTheOutOfLineOnes) {
  // Rank 3 of 20 is 30 % slower; the job's per-step median moves by 1 us of 100 ms.
  const nsel::RunDiff diff = nsel::diff_runs(run(20, 20, 1.0), run(20, 20, 1.3, {3}, 200), {});
  ASSERT_EQ(diff.step_time().change.verdict, nsel::ChangeVerdict::unchanged);
  const std::string text = nsel::render_diff_text(diff);
  EXPECT_EQ(text.rfind("step time: unchanged (", 0), 0u) << text;
  EXPECT_NE(text.find("w rank 3 (pid 103 -> 203) *"), std::string::npos) << text;
  EXPECT_EQ(text.find("w rank 4"), std::string::npos) << text;
  EXPECT_NE(text.find("  19 more ranks in line (see --json or --csv)\n"), std::string::npos)
      << text;
}

TEST(RenderDiff, TextListsUnpairedProcessesStepsAndFailures) {
  nsel::ReportSet baseline = run(14, 6, 1.0);
  nsel::ReportSet candidate = run(2, 4, 1.0, {}, 200);
  baseline.failures.push_back({"bad.nsys-rep", "bad.nsys-rep: not a SQLite export"});
  const nsel::RunDiff diff = nsel::diff_runs(baseline, candidate, {});
  ASSERT_EQ(diff.unpaired.size(), 12u);
  const std::string text = nsel::render_diff_text(diff);
  EXPECT_EQ(
      text.rfind("step time: inconclusive (4 steps in the candidate, at least 5 needed)\n", 0), 0u)
      << text;
  EXPECT_NE(text.find("Unpaired processes (12)"), std::string::npos);
  // The first ten by key, in the order of their numbers: ranks 2 to 11.
  EXPECT_NE(text.find("baseline  w rank 2 "), std::string::npos) << text;
  EXPECT_NE(text.find("baseline  w rank 11"), std::string::npos) << text;
  EXPECT_EQ(text.find("w rank 12"), std::string::npos) << text;
  EXPECT_NE(text.find("  ... and 2 more (see --json or --csv)"), std::string::npos) << text;
  EXPECT_NE(text.find("only in the baseline (2): 5, 6"), std::string::npos) << text;
  EXPECT_NE(text.find("Not readable in the baseline (1)\n  bad.nsys-rep: not a SQLite export"),
            std::string::npos);
  EXPECT_NE(text.find("inconclusive: step, range forward (4 steps in the candidate"),
            std::string::npos)
      << text;
}

TEST(RenderDiff, JsonSchemaAndRoundTrip) {
  nsel::ReportSet baseline = run(3, 20, 1.0);
  baseline.processes.push_back(run(1, 3, 1.0, {}, 900).processes[0]);
  baseline.processes.back().identity.rank = 7;
  const nsel::RunDiff diff = nsel::diff_runs(baseline, run(3, 20, 1.1, {}, 200), {});
  const nlohmann::json doc = nlohmann::json::parse(nsel::render_diff_json(diff).dump());
  EXPECT_EQ(doc.at("schema"), "nsel.diff/1");
  EXPECT_EQ(doc.at("schema"), nsel::kDiffJsonSchema);
  EXPECT_EQ(doc.at("options").at("pair_by"), "worker,rank");
  EXPECT_EQ(doc.at("options").at("min_steps"), 5);
  EXPECT_EQ(doc.at("baseline").at("processes"), 4);
  const nlohmann::json& step = doc.at("metrics").at(0);
  EXPECT_EQ(step.at("kind"), "step");
  EXPECT_EQ(step.at("change").at("verdict"), "slower");
  EXPECT_EQ(step.at("change").at("change_percent").get<double>(),
            diff.step_time().change.change_percent);
  EXPECT_EQ(step.at("change").at("p_value").get<double>(), diff.step_time().change.p_value);
  EXPECT_EQ(step.at("change").at("baseline_steps").at("count"), 20);
  EXPECT_EQ(step.at("change").at("baseline").at("count"), 60);
  EXPECT_EQ(step.at("change").at("baseline_steps").at("median_ns").get<double>(),
            diff.step_time().change.baseline_steps.median);
  EXPECT_TRUE(step.at("change").at("reason").is_null());
  EXPECT_EQ(doc.at("metrics").at(1).at("kind"), "range");
  EXPECT_EQ(doc.at("metrics").at(1).at("name"), "forward");
  ASSERT_EQ(doc.at("pairs").size(), 3u);
  EXPECT_EQ(doc.at("pairs").at(1).at("key"), "w rank 1");
  EXPECT_EQ(doc.at("pairs").at(1).at("paired_by"), "identity");
  EXPECT_EQ(doc.at("pairs").at(1).at("baseline").at("label"), "w/101");
  EXPECT_EQ(doc.at("pairs").at(1).at("baseline").at("rank"), 1);
  EXPECT_TRUE(doc.at("pairs").at(1).at("baseline").at("node").is_null());
  EXPECT_TRUE(doc.at("pairs").at(1).at("compute").is_null());
  EXPECT_EQ(doc.at("pairs").at(1).at("step").at("verdict"), "slower");
  ASSERT_EQ(doc.at("unpaired").size(), 1u);
  EXPECT_EQ(doc.at("unpaired").at(0).at("key"), "w rank 7");
  EXPECT_EQ(doc.at("unpaired").at(0).at("side"), "baseline");
  EXPECT_EQ(doc.at("steps").size(), 20u);
  EXPECT_EQ(doc.at("steps").at(0).at("step"), 1);
  EXPECT_TRUE(doc.at("kernels").is_array());
  EXPECT_EQ(doc.at("steps_only_in_baseline").size(), 0u);
}

TEST(RenderDiff, CsvFilesWithHeadersAndRows) {
  nsel::ReportSet baseline = run(3, 8, 1.0);
  nsel::ReportSet candidate = run(4, 6, 1.05, {}, 200);
  add_kernels(baseline, 10, 5000);
  add_kernels(candidate, 12, 5000);
  const nsel::RunDiff diff = nsel::diff_runs(baseline, candidate, {});
  const fs::path dir = nsel::test::fresh_dir("render-diff", "csv") / "out";
  const std::vector<fs::path> written = nsel::write_diff_csv(diff, dir);
  std::vector<std::string> names;
  for (const fs::path& f : written) names.push_back(f.filename().string());
  EXPECT_EQ(names,
            (std::vector<std::string>{"diff_metrics.csv", "diff_steps.csv", "diff_ranks.csv",
                                      "diff_kernels.csv", "diff_nvtx.csv", "diff_unpaired.csv"}));
  const auto header_starts = [&](const std::string& file, const std::string& start,
                                 std::size_t rows) {
    const std::vector<std::string> lines = file_lines(dir / file);
    ASSERT_FALSE(lines.empty()) << file;
    EXPECT_EQ(lines[0].rfind(start, 0), 0u) << file << ": " << lines[0];
    EXPECT_EQ(lines.size(), rows + 1) << file;
  };
  header_starts("diff_metrics.csv", "metric,kind,verdict,change_percent,p_value,", 2);
  header_starts("diff_steps.csv", "step,pairs,baseline_median_ns,candidate_median_ns,", 6);
  header_starts("diff_ranks.csv", "key,paired_by,baseline_process,candidate_process,", 3);
  header_starts("diff_kernels.csv", "name,communication,baseline_count,candidate_count,", 2);
  header_starts("diff_nvtx.csv", "name,baseline_count,candidate_count,", 0);
  // One candidate process (rank 3) and steps 7 and 8 of each of the three pairs' baselines.
  header_starts("diff_unpaired.csv", "what,side,key,process,step,report", 1 + 3 * 2);
  const std::vector<std::string> kernels = file_lines(dir / "diff_kernels.csv");
  // The full name, quoted for its commas; counts of both sides summed over three pairs.
  EXPECT_NE(std::find_if(kernels.begin(), kernels.end(),
                         [](const std::string& l) {
                           return l.rfind("\"void at::native::vectorized_elementwise_kernel<4,",
                                          0) == 0;
                         }),
            kernels.end());
  EXPECT_NE(std::find_if(kernels.begin(), kernels.end(),
                         [](const std::string& l) {
                           return l.rfind(
                                      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL("
                                      "ncclDevKernelArgs),1,30,36,6,",
                                      0) == 0;
                         }),
            kernels.end());
  fs::remove_all(dir.parent_path());
}

// The terminal tables cost time in their content, not in rows x widest cell: a 5 MB name is cut
// (with "..."), escaped, and widens nothing; the output stays small.
TEST(TextTable, AHugeCellIsCutAndTheOutputStaysSmall) {
  const std::string huge(5'000'000, 'n');
  nsel::render_detail::TextTable table({"count", "name", "last"});
  for (int i = 0; i < 20; ++i) table.add({std::to_string(i), i == 7 ? huge : "x", huge});
  table.add({"1", "esc\x1b[2J\nforged", "end"});
  const std::string text = table.render("  ");
  EXPECT_LT(text.size(), 21u * (64 + 512 + 32));
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("esc\\x1b[2J\\nforged"), std::string::npos);
  EXPECT_NE(text.find(std::string(61, 'n') + "..."), std::string::npos);
  // The last column is never padded: no line ends in a blank.
  EXPECT_EQ(text.find(" \n"), std::string::npos);
}
