// `nsel report`'s text and JSON drawn from summaries of hand-built SQLite files that stand in
// for the exports of GPU reports (the GPU tables cannot come from a report made here).
#include <gtest/gtest.h>

#include <filesystem>

#include "nsel/analyze/comparison.hpp"
#include "nsel/analyze/summary.hpp"
#include "nsel/render/report.hpp"
#include "unit_files.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& label) {
  return nsel::test::fresh_dir("render", label);
}

void execute(const fs::path& db_path, const std::string& sql) {
  nsel::test::execute_sql(db_path, sql);
}

}  // namespace

// A stand-in for the SQLite export of a GPU report (no GPU here to make a real one): the
// documented tables with the columns nsel reads, and times chosen so every answer is known.
TEST(GpuStandIn, KernelSummaryAndGpuBusyPerStep) {
  const fs::path dir = fresh_dir("gpu");
  const fs::path db = dir / "gpu_standin_export.sqlite";
  execute(db, R"(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO StringIds VALUES (1, 'step 1'), (2, 'step 2'), (10, 'gemm'), (11, 'relu'),
      (12, 'void gemm_kernel<float>(float*)'), (13, 'void relu_kernel(float*)');
    CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
      rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
      endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER);
    INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId) VALUES
      (1000, 2000, 59, 77, 1, 0), (2000, 3500, 59, 77, 2, 0);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER,
      globalPid INTEGER, demangledName INTEGER, shortName INTEGER, gridX INTEGER, gridY INTEGER,
      gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, streamId, demangledName, shortName) VALUES
      (1100, 1300, 1, 12, 10), (1200, 1400, 2, 12, 10), (1500, 1550, 1, 13, 11),
      (2200, 2600, 1, 12, 10), (3400, 3600, 1, 13, 11);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER, streamId INTEGER, bytes INTEGER, copyKind INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, bytes) VALUES (1900, 2100, 4096);
  )");
  const nsel::ProcessSummary s = nsel::summarize_export(db, {nsel::StepNamePattern(), 10});
  EXPECT_TRUE(s.has_gpu);
  EXPECT_FALSE(s.has_osrt);
  ASSERT_EQ(s.steps.size(), 2u);
  // Step 1 [1000,2000): [1100,1400) + [1500,1550) + [1900,2000) of the copy.
  EXPECT_EQ(s.steps[0].gpu_busy_ns, 450);
  // Step 2 [2000,3500): [2000,2100) + [2200,2600) + [3400,3500).
  EXPECT_EQ(s.steps[1].gpu_busy_ns, 600);
  ASSERT_EQ(s.kernels.size(), 2u);
  EXPECT_EQ(s.kernel_names, 2);
  // Full names by default, as gpukernsum; grid and block all 0 here (no values in the rows).
  EXPECT_EQ(s.kernels[0].name, "void gemm_kernel<float>(float*)");
  EXPECT_EQ(s.kernels[0].grid, "0 0 0");
  EXPECT_FALSE(s.kernels[0].communication);
  EXPECT_EQ(s.kernels[0].stats.count, 3);
  EXPECT_EQ(s.kernels[0].stats.total, 800);
  EXPECT_EQ(s.kernels[0].stats.median, 200);
  EXPECT_EQ(nsel::round_like_sqlite(s.kernels[0].stats.stddev, 1), 115.5);
  EXPECT_EQ(s.kernels[0].time_percent, 76.2);
  EXPECT_EQ(s.kernels[1].name, "void relu_kernel(float*)");
  EXPECT_EQ(s.kernels[1].stats.median, 125);
  nsel::SummaryOptions short_names{nsel::StepNamePattern(), 10};
  short_names.short_kernel_names = true;
  const nsel::ProcessSummary by_short = nsel::summarize_export(db, short_names);
  ASSERT_EQ(by_short.kernels.size(), 2u);
  EXPECT_EQ(by_short.kernels[0].name, "gemm");
  EXPECT_EQ(by_short.kernels[1].name, "relu");
  EXPECT_EQ(s.kernels[1].time_percent, 23.8);

  const nsel::ProcessSummary top1 = nsel::summarize_export(db, {nsel::StepNamePattern(), 1});
  ASSERT_EQ(top1.kernels.size(), 1u);
  EXPECT_EQ(top1.kernel_names, 2);

  nsel::ReportSet set;
  set.processes.push_back(s);
  set.comparison = nsel::compare_steps(set.processes, 10);
  const std::string text = nsel::render_text(set);
  EXPECT_NE(text.find("GPU busy (ms)"), std::string::npos) << text;
  EXPECT_NE(text.find("CUDA kernels (top 2 of 2 rows by total time"), std::string::npos) << text;
  const auto json = nsel::render_json(set);
  EXPECT_EQ(json["processes"][0]["steps"][1]["gpu_idle_ns"], 900);
  fs::remove_all(dir);
}

// Two processes on two GPUs in one report (as nsys-ai's): a step counts only the activity on
// its own process's devices; communication is the NCCL kernels' union, compute the rest of the
// busy time. Step 0 is a step like any other.
TEST(GpuStandIn, BusyCommunicationAndComputeOnTheDevicesOfTheStepsProcess) {
  const fs::path dir = fresh_dir("two-gpus");
  const fs::path db = dir / "two_processes.sqlite";
  // globalPid is the process number << 24; a thread's globalTid adds its thread number.
  execute(db, R"(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO StringIds VALUES (1, 'step 0'), (2, 'step 1'), (10, 'gemm'),
      (11, 'ncclDevKernel_SendRecv'), (12, 'void gemm<float>()'),
      (13, 'ncclDevKernel_SendRecv(ncclDevComm *, unsigned long, ncclWork *)');
    CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
      text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER);
    INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId) VALUES
      (1000, 2000, 59, 1677721607, 2, 0), (2000, 3000, 59, 3355443209, 1, 0);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER,
      gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER,
      blockZ INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
      (1100, 1400, 0, 1677721600, 12, 10, 4, 1, 1, 128, 1, 1),
      (1300, 1600, 0, 1677721600, 13, 11, 2, 1, 1, 512, 1, 1),
      (1000, 1900, 1, 3355443200, 12, 10, 8, 1, 1, 128, 1, 1),
      (2100, 2500, 1, 3355443200, 12, 10, 4, 1, 1, 128, 1, 1),
      (2000, 2900, 0, 1677721600, 12, 10, 4, 1, 1, 128, 1, 1);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER, globalPid INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1700, 1800, 0, 1677721600);
  )");
  const nsel::ProcessSummary s = nsel::summarize_export(db, {});
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].step, 1);
  EXPECT_EQ(s.steps[0].global_pid, 1677721600);
  // Device 0 only: [1100,1600) + [1700,1800); the NCCL kernel [1300,1600).
  EXPECT_EQ(s.steps[0].gpu_busy_ns, 600);
  EXPECT_EQ(s.steps[0].communication_ns, 300);
  EXPECT_EQ(s.steps[0].compute_ns, 300);
  EXPECT_EQ(s.steps[0].gpu_idle_ns(), 400);
  // Step 0, pushed by the second process: device 1 only.
  EXPECT_EQ(s.steps[1].step, 0);
  EXPECT_EQ(s.steps[1].gpu_busy_ns, 400);
  EXPECT_EQ(s.steps[1].communication_ns, 0);
  // One row per name, grid and block: gemm of grid 4 and of grid 8 are two rows.
  ASSERT_EQ(s.kernels.size(), 3u);
  EXPECT_EQ(s.kernels[0].name, "void gemm<float>()");
  EXPECT_EQ(s.kernels[0].grid, "4 1 1");
  EXPECT_EQ(s.kernels[0].block, "128 1 1");
  EXPECT_EQ(s.kernels[0].stats.count, 3);
  EXPECT_EQ(s.kernels[1].grid, "8 1 1");
  EXPECT_EQ(s.kernels[2].name, "ncclDevKernel_SendRecv(ncclDevComm *, unsigned long, ncclWork *)");
  EXPECT_TRUE(s.kernels[2].communication);
  EXPECT_FALSE(s.kernels[0].communication);

  nsel::ReportSet set;
  set.processes.push_back(s);
  const auto json = nsel::render_json(set);
  EXPECT_EQ(json["processes"][0]["steps"][0]["communication_ns"], 300);
  EXPECT_EQ(json["processes"][0]["steps"][0]["compute_ns"], 300);
  EXPECT_EQ(json["processes"][0]["kernels"][0]["grid"], "4 1 1");
  EXPECT_EQ(json["processes"][0]["kernels"][2]["communication"], true);
  const std::string text = nsel::render_text(set);
  EXPECT_NE(text.find("* ncclDevKernel_SendRecv"), std::string::npos) << text;
  EXPECT_NE(text.find("communication (ms)"), std::string::npos) << text;
  fs::remove_all(dir);
}

// A rank's wait: its communication time in the step above the least of the ranks that have
// GPU data; a rank without GPU data has none.
TEST(CompareSteps, CommunicationWaitAboveTheLeastOfTheStep) {
  std::vector<nsel::ProcessSummary> processes(3);
  const std::optional<long long> talk[3] = {50, 80, std::nullopt};
  for (int p = 0; p < 3; ++p) {
    processes[p].identity.worker = "w" + std::to_string(p);
    nsel::StepSummary s;
    s.step = 0;
    s.start_ns = 0;
    s.end_ns = 1000;
    s.communication_ns = talk[p];
    processes[p].steps.push_back(s);
  }
  const nsel::StepComparison c = nsel::compare_steps(processes, 10);
  ASSERT_EQ(c.steps.size(), 1u);
  ASSERT_EQ(c.steps[0].communication_wait_ns.size(), 3u);
  EXPECT_EQ(c.steps[0].communication_wait_ns[0], 0);
  EXPECT_EQ(c.steps[0].communication_wait_ns[1], 30);
  EXPECT_EQ(c.steps[0].communication_wait_ns[2], std::nullopt);

  nsel::ReportSet set;
  set.processes = processes;
  set.comparison = c;
  const std::string text = nsel::render_text(set);
  EXPECT_NE(text.find("  step     w0     w1  w2  waited most\n     0  0.000  0.000   -  w1\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(nsel::render_json(set)["steps"][0]["communication_wait_ns"]["w1"], 30);
}
