// nsel plan's lines and JSON lines, drawn from WorkerPlans built by hand.
#include "nsel/render/plan.hpp"

#include <gtest/gtest.h>

#include "hostile_name.hpp"

namespace {

using nsel::test::kHostile;
using nsel::test::kHostileJson;
using nsel::test::kHostileShown;

constexpr auto kReplace = nlohmann::json::error_handler_t::replace;

// A worker profiled in two windows, one report each.
nsel::WorkerPlan profiled() {
  nsel::WorkerPlan plan;
  plan.worker = "dtensor_policy_worker";
  plan.profile = true;
  plan.pattern = "*policy*";
  plan.windows = {{2, 4}, {10, 12}};
  plan.window = plan.windows.front();
  plan.repeated_reports = nsel::RepeatedReports{"", "dtensor_policy_worker_2:4,10:12_", ""};
  plan.capture = nsel::CaptureMode::nvtx;
  plan.options.set("t", "cuda,nvtx");
  plan.options.set("capture-range", "nvtx");
  plan.command = {"nsys", "profile", "-t", "cuda,nvtx", "python", "train.py"};
  plan.environment = {"NSEL_CAPTURE=nvtx", "A=b c"};
  plan.reason = "matched pattern '*policy*'";
  plan.identity.rank = {3, "RANK", ""};
  return plan;
}

}  // namespace

TEST(RenderPlan, AProfiledWorkerEveryLine) {
  const nsel::GpuProbe probe{false, "libcuda.so.1 not found"};
  EXPECT_EQ(nsel::render_plan_text(profiled(), &probe, true, "dtensor_policy_worker", false),
            "dtensor_policy_worker: profiled (matched pattern '*policy*')\n"
            "  steps:    2:4 (steps 2 to 3)\n"
            "  steps:    10:12 (steps 10 to 11)\n"
            "  report:   dtensor_policy_worker_2:4_<PID>.nsys-rep\n"
            "  report:   dtensor_policy_worker_10:12_<PID>.nsys-rep\n"
            "  capture:  nvtx (GPU: libcuda.so.1 not found)\n"
            "  option:   t = cuda,nvtx\n"
            "  option:   capture-range = nvtx\n"
            "  command:  nsys profile -t cuda,nvtx python train.py\n"
            "  env:      NSEL_CAPTURE=nvtx\n"
            "  env:      'A=b c'\n");
}

TEST(RenderPlan, WithoutAProgramOrAProbeAndBrief) {
  nsel::WorkerPlan plan = profiled();
  plan.windows.pop_back();
  plan.repeated_reports.reset();
  plan.environment.clear();
  plan.options = {};
  plan.command = {"nsys", "profile"};
  EXPECT_EQ(nsel::render_plan_text(plan, nullptr, false, "w", false),
            "w: profiled (matched pattern '*policy*')\n"
            "  steps:    2:4 (steps 2 to 3)\n"
            "  capture:  nvtx\n"
            "  command:  nsys profile PROGRAM [ARGS...]\n");
  EXPECT_EQ(nsel::render_plan_text(plan, nullptr, false, "w rank 3", true),
            "w rank 3: profiled (matched pattern '*policy*')\n");
}

TEST(RenderPlan, ANameNotProfiledIsEscaped) {
  nsel::WorkerPlan plan;
  plan.worker = kHostile;
  plan.reason = "no pattern matches " + kHostile;
  EXPECT_EQ(nsel::render_plan_text(plan, nullptr, true, kHostile, false),
            kHostileShown + ": not profiled (no pattern matches " + kHostileShown + ")\n");
  const nlohmann::ordered_json json = nsel::render_plan_json(plan, nullptr);
  EXPECT_EQ(json["worker"].get<std::string>(), kHostile);
  EXPECT_EQ(json["worker"].dump(-1, ' ', false, kReplace), kHostileJson);
  EXPECT_EQ(json["step_range"], nullptr);
  EXPECT_EQ(json["capture"], nullptr);
  EXPECT_EQ(json["reports"], nlohmann::ordered_json::array());
}

// The line --json prints: "schema" first, then the keys in the order they always had.
TEST(RenderPlan, JsonLineWhole) {
  const nsel::GpuProbe probe{true, "1 CUDA device"};
  EXPECT_EQ(nsel::render_plan_json(profiled(), &probe).dump(),
            R"({"schema":"nsel.plan/1","capture":"nvtx",)"
            R"("command":["nsys","profile","-t","cuda,nvtx","python","train.py"],)"
            R"("environment":{"A":"b c","NSEL_CAPTURE":"nvtx"},)"
            R"("gpu":{"detail":"1 CUDA device","usable":true},)"
            R"("local_rank":{"source":null,"value":null},"node":{"source":null,"value":null},)"
            R"("options":{"capture-range":"nvtx","t":"cuda,nvtx"},"pattern":"*policy*",)"
            R"("profile":true,"rank":{"source":"RANK","value":3},)"
            R"("reason":"matched pattern '*policy*'",)"
            R"("reports":["dtensor_policy_worker_2:4_<PID>.nsys-rep",)"
            R"("dtensor_policy_worker_10:12_<PID>.nsys-rep"],"step_range":"2:4,10:12",)"
            R"("windows":["2:4","10:12"],"worker":"dtensor_policy_worker"})");
  EXPECT_EQ(std::string(nsel::kPlanJsonSchema), "nsel.plan/1");
}
