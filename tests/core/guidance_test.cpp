// Guidance before a selected worker starts: the long-window warning with its size estimate, and
// the GPU a capture needs.
#include <gtest/gtest.h>

#include <map>

#include "nsel/core/plan.hpp"
#include "nsel/core/settings.hpp"

using nsel::CaptureMode;
using nsel::GpuVisibility;
using nsel::plan_guidance;

namespace {

nsel::WorkerPlan plan_for(const std::string& window, CaptureMode node_capture,
                          const std::string& extra = "") {
  std::map<std::string, std::string> values = {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"},
                                               {"NRL_NSYS_PROFILE_STEP_RANGE", window}};
  if (!extra.empty()) values["NRL_NSYS_EXTRA_OPTIONS"] = extra;
  const auto settings = nsel::ProfileSettings::from_environment(
      [values](std::string_view name) -> std::optional<std::string> {
        const auto it = values.find(std::string(name));
        if (it == values.end()) return std::nullopt;
        return it->second;
      });
  nsel::PlanRequest request;
  request.worker = "dtensor_policy_worker";
  request.node_capture = node_capture;
  request.program = {"/bin/train"};
  return nsel::plan_worker(settings, request);
}

const GpuVisibility kNoGpu{false, "libcuda.so.1 not found", std::nullopt};
const GpuVisibility kGpu{true, "1 CUDA device", std::nullopt};

}  // namespace

TEST(Guidance, ShortWindowWithAGpuSaysNothing) {
  EXPECT_TRUE(plan_guidance(plan_for("2:12", CaptureMode::cuda), CaptureMode::automatic, kGpu)
                  .empty());  // 10 steps: as the guide suggests
}

TEST(Guidance, LongWindowSaysItsLengthAndTheEstimate) {
  const auto plan = plan_for("2:52", CaptureMode::cuda);
  // 139 KB fixed, then 60 B of NVTX and 55 KB of CUDA traces a step.
  EXPECT_EQ(nsel::estimate_report_size(plan).bytes, 139000u + 50u * 55060u);
  const auto lines = plan_guidance(plan, CaptureMode::automatic, kGpu);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "nsel: warning: worker 'dtensor_policy_worker': window 2:52 is 50 steps, the NeMo RL "
            "guide suggests about 10; expect a report of about 2.8 MiB (135.7 KiB + 50 steps x "
            "53.8 KiB of NVTX and CUDA as on one A100 DDP rank) that takes longer to write and "
            "to open; shorten NRL_NSYS_PROFILE_STEP_RANGE unless you need every step");
}

TEST(Guidance, EstimateFollowsTheTraces) {
  const auto nvtx_only = plan_for("1:101", CaptureMode::nvtx, R"({"t": "nvtx"})");
  EXPECT_EQ(nsel::estimate_report_size(nvtx_only).bytes, 139000u + 100u * 60u);
  // Several windows: one report each, the fixed part counted per report.
  const auto two = plan_for("2:4,10:12", CaptureMode::nvtx, R"({"t": "nvtx"})");
  EXPECT_EQ(nsel::estimate_report_size(two).bytes, 2u * 139000u + 4u * 60u);
}

TEST(Guidance, CudaCaptureWithoutAGpuLeavesNoReport) {
  const auto lines = plan_guidance(plan_for("2:4", CaptureMode::cuda), CaptureMode::cuda,
                                   GpuVisibility{false, "cuInit: 100", std::string("")});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "nsel: warning: worker 'dtensor_policy_worker': sees no usable GPU (cuInit: 100, "
            "CUDA_VISIBLE_DEVICES='') but its capture uses the CUDA profiler API, so its window "
            "would never open and it would leave no report; fix: run it where a GPU is visible "
            "(check CUDA_VISIBLE_DEVICES and the driver), or, if it uses no GPU, set "
            "NSEL_CAPTURE=nvtx");
}

TEST(Guidance, CudaTracesWithoutAGpuHoldNoCudaData) {
  const auto lines =
      plan_guidance(plan_for("2:4", CaptureMode::nvtx), CaptureMode::automatic, kNoGpu);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "nsel: warning: worker 'dtensor_policy_worker': sees no usable GPU (libcuda.so.1 not "
            "found) but its report would hold no CUDA data (t=cuda,nvtx); fix: run it where a GPU "
            "is visible (check CUDA_VISIBLE_DEVICES and the driver), or, if it uses no GPU, set "
            "NSEL_CAPTURE=nvtx and drop cuda from t in NRL_NSYS_EXTRA_OPTIONS");
  // A capture forced to nvtx says the user knows there is no GPU; no CUDA traces, no warning.
  EXPECT_TRUE(plan_guidance(plan_for("2:4", CaptureMode::nvtx), CaptureMode::nvtx, kNoGpu).empty());
  EXPECT_TRUE(plan_guidance(plan_for("2:4", CaptureMode::nvtx, R"({"t": "nvtx,osrt"})"),
                            CaptureMode::automatic, kNoGpu)
                  .empty());
  // Not probed: nothing said.
  EXPECT_TRUE(
      plan_guidance(plan_for("2:4", CaptureMode::nvtx), CaptureMode::automatic, std::nullopt)
          .empty());
}
