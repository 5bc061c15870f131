#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "nsel/step/step.hpp"

using nsel::StepController;

namespace {

// Records what the controller asks of a capture backend; the real backends need nsys (tested
// end to end in the integration tests) or a GPU.
class RecordingBackend final : public nsel::CaptureBackend {
 public:
  explicit RecordingBackend(std::vector<std::string>* log, bool can_start = true)
      : log_(log), can_start_(can_start) {}
  bool start() override {
    log_->push_back("start");
    return can_start_;
  }
  void stop() override { log_->push_back("stop"); }
  std::string_view name() const override { return "recording"; }

 private:
  std::vector<std::string>* log_;
  bool can_start_;
};

std::vector<std::string> drive(nsel::StepWindow window, std::vector<long long> steps,
                               bool finish = false, bool can_start = true) {
  std::vector<std::string> log;
  StepController controller(window, std::make_unique<RecordingBackend>(&log, can_start));
  for (long long step : steps) {
    log.push_back("step " + std::to_string(step));
    controller.on_step(step);
  }
  if (finish) controller.finish();
  return log;
}

}  // namespace

TEST(StepController, CapturesStartUpToStop) {
  EXPECT_EQ(drive({2, 4}, {1, 2, 3, 4, 5}),
            (std::vector<std::string>{"step 1", "step 2", "start", "step 3", "step 4", "stop",
                                      "step 5"}));
}

TEST(StepController, WindowOfOneFirstStep) {
  EXPECT_EQ(drive({1, 2}, {1, 2, 3}),
            (std::vector<std::string>{"step 1", "start", "step 2", "stop", "step 3"}));
}

TEST(StepController, WindowPastTheLastStepStopsAtFinish) {
  EXPECT_EQ(drive({4, 10}, {1, 2, 3, 4, 5}, /*finish=*/true),
            (std::vector<std::string>{"step 1", "step 2", "step 3", "step 4", "start", "step 5",
                                      "stop"}));
}

TEST(StepController, NeverStartedMeansNothingToStop) {
  EXPECT_EQ(drive({7, 9}, {1, 2, 3}, /*finish=*/true),
            (std::vector<std::string>{"step 1", "step 2", "step 3"}));
}

TEST(StepController, OnlyTheExactStartStepOpensTheWindow) {
  // The contract starts capture when the reported step equals start.
  EXPECT_EQ(drive({2, 4}, {1, 3, 4}), (std::vector<std::string>{"step 1", "step 3", "step 4"}));
}

TEST(StepController, FailedStartEndsTheWindowQuietly) {
  std::vector<std::string> log;
  StepController controller({2, 4}, std::make_unique<RecordingBackend>(&log, false));
  controller.on_step(2);
  controller.on_step(4);
  controller.finish();
  EXPECT_EQ(log, std::vector<std::string>{"start"});
  EXPECT_EQ(controller.state(), StepController::State::done);
}

TEST(StepApi, InactiveWithoutLauncher) {
  // This test process was not started by `nsel exec`, so the C ABI is inactive.
  EXPECT_EQ(nsel_step_control_active_, 0);
  nsel::step(1);
  EXPECT_EQ(nsel_capturing(), 0);
}

TEST(CallWithDeadline, ReturnsWhetherTheCallFinishedInTime) {
  int value = 0;
  EXPECT_TRUE(nsel::call_with_deadline([&] { value = 1; }, std::chrono::seconds(5)));
  EXPECT_EQ(value, 1);
  // A call that blocks (as nsys can at the end of a capture range) is left behind: it cannot
  // finish before `release` is set, which happens only after call_with_deadline returned.
  auto release = std::make_shared<std::atomic<bool>>(false);
  EXPECT_FALSE(nsel::call_with_deadline(
      [release] {
        while (!*release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      },
      std::chrono::milliseconds(100)));
  *release = true;
}
