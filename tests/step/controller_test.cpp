#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
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

TEST(StepController, AResumedJobOpensAtTheFirstStepInsideTheWindow) {
  // NeMo RL calls the step hook from the resumed step on: window 3:7 resumed at step 4 captures
  // steps 4, 5 and 6.
  EXPECT_EQ(drive({3, 7}, {4, 5, 6, 7, 8}),
            (std::vector<std::string>{"step 4", "start", "step 5", "step 6", "step 7", "stop",
                                      "step 8"}));
  EXPECT_EQ(drive({2, 4}, {1, 3, 4}),
            (std::vector<std::string>{"step 1", "step 3", "start", "step 4", "stop"}));
}

TEST(StepController, SkippedAndRepeatedStepsInsideKeepTheWindowOpen) {
  EXPECT_EQ(drive({3, 7}, {3, 5, 5, 6, 6, 7}),
            (std::vector<std::string>{"step 3", "start", "step 5", "step 5", "step 6", "step 6",
                                      "step 7", "stop"}));
}

TEST(StepController, AJumpPastTheWindowClosesIt) {
  EXPECT_EQ(drive({3, 7}, {3, 4, 20}),
            (std::vector<std::string>{"step 3", "start", "step 4", "step 20", "stop"}));
  // A jump over the whole window opens nothing.
  EXPECT_EQ(drive({3, 7}, {1, 2, 9}), (std::vector<std::string>{"step 1", "step 2", "step 9"}));
}

TEST(StepController, AStepBackInsideReopensTheWindowAsNeMoRlDoes) {
  // Out of the window closes (also a step before it); back inside opens again.
  EXPECT_EQ(drive({3, 7}, {4, 2, 5, 7, 6}, /*finish=*/true),
            (std::vector<std::string>{"step 4", "start", "step 2", "stop", "step 5", "start",
                                      "step 7", "stop", "step 6", "start", "stop"}));
}

// NeMo RL's maybe_gpu_profile_step, restated: inside the window and not started -> start;
// outside and started -> stop; at exit, started -> stop.
std::vector<std::string> nemo_rl_rule(nsel::StepWindow window,
                                      const std::vector<long long>& steps) {
  std::vector<std::string> log;
  bool started = false;
  for (long long step : steps) {
    log.push_back("step " + std::to_string(step));
    if (window.start <= step && step < window.stop) {
      if (!started) log.push_back("start");
      started = true;
    } else if (started) {
      log.push_back("stop");
      started = false;
    }
  }
  if (started) log.push_back("stop");
  return log;
}

TEST(StepController, AgreesWithNeMoRlsRuleOnRandomStepSequences) {
  std::mt19937_64 random(20261201);
  const int kSequences = 100000;
  int captured_sequences = 0;
  for (int i = 0; i < kSequences; ++i) {
    const long long start = std::uniform_int_distribution<long long>(1, 8)(random);
    const nsel::StepWindow window{start,
                                  start + std::uniform_int_distribution<long long>(1, 6)(random)};
    std::vector<long long> steps;
    // Mostly increasing runs with resumes, skips, repeats and jumps back.
    long long step = std::uniform_int_distribution<long long>(1, 10)(random);
    const int length = std::uniform_int_distribution<int>(0, 14)(random);
    for (int k = 0; k < length; ++k) {
      steps.push_back(step);
      step = std::max(1LL, step + std::uniform_int_distribution<long long>(-3, 4)(random));
    }
    const auto expected = nemo_rl_rule(window, steps);
    if (std::find(expected.begin(), expected.end(), "start") != expected.end()) {
      ++captured_sequences;
    }
    ASSERT_EQ(drive(window, steps, /*finish=*/true), expected)
        << "window " << window.text() << ", sequence " << i;
  }
  // The sequences exercise both outcomes.
  EXPECT_GT(captured_sequences, kSequences / 4);
  EXPECT_LT(captured_sequences, kSequences);
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
