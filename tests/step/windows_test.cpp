// The step controller over several step windows: each opens and closes in turn, and the
// captures keep nsys's numbering.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "nsel/step/step.hpp"

using nsel::StepWindow;

namespace {

class LoggingBackend final : public nsel::CaptureBackend {
 public:
  explicit LoggingBackend(std::vector<std::string>* log) : log_(log) {}
  bool start() override {
    log_->push_back("start");
    return true;
  }
  void stop() override { log_->push_back("stop"); }
  std::string_view name() const override { return "logging"; }

 private:
  std::vector<std::string>* log_;
};

std::string run_steps(std::vector<StepWindow> windows, const std::vector<long long>& steps,
                      std::size_t* captures = nullptr) {
  std::vector<std::string> log;
  nsel::StepController controller(std::move(windows), std::make_unique<LoggingBackend>(&log));
  std::string out;
  for (long long step : steps) {
    controller.on_step(step);
    out += std::to_string(step) + ":";
    for (const std::string& event : log) out += event + ",";
    out += " ";
    log.clear();
  }
  controller.finish();
  for (const std::string& event : log) out += "end:" + event;
  if (captures != nullptr) *captures = controller.captures();
  return out;
}

}  // namespace

TEST(StepControllerWindows, EachWindowOpensAndClosesInTurn) {
  EXPECT_EQ(run_steps({{2, 4}, {6, 8}}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
            "1: 2:start, 3: 4:stop, 5: 6:start, 7: 8:stop, 9: ");
}

TEST(StepControllerWindows, AdjacentWindowsCloseAndReopenAtTheSameStep) {
  EXPECT_EQ(run_steps({{2, 4}, {4, 6}}, {1, 2, 3, 4, 5, 6}),
            "1: 2:start, 3: 4:stop,start, 5: 6:stop, ");
}

TEST(StepControllerWindows, AWindowNotReachedGetsNoCapture) {
  std::size_t captures = 0;
  EXPECT_EQ(run_steps({{2, 4}, {10, 12}}, {1, 2, 3, 4, 5}, &captures),
            "1: 2:start, 3: 4:stop, 5: ");
  EXPECT_EQ(captures, 1u);
  // The job ending inside the second window closes it at finish.
  EXPECT_EQ(run_steps({{2, 3}, {4, 9}}, {1, 2, 3, 4, 5}, &captures),
            "1: 2:start, 3:stop, 4:start, 5: end:stop");
  EXPECT_EQ(captures, 2u);
}

TEST(StepControllerWindows, APassedOverWindowGetsAnEmptyCaptureToKeepTheNumbering) {
  // Steps 2 and 3 never come: window 2:4 is empty, and 6:8 is still nsys's second capture.
  std::size_t captures = 0;
  EXPECT_EQ(run_steps({{2, 4}, {6, 8}}, {1, 4, 5, 6, 7, 8}, &captures),
            "1: 4: 5: 6:start,stop,start, 7: 8:stop, ");
  EXPECT_EQ(captures, 2u);
}

TEST(StepControllerWindows, AResumedJobOpensTheWindowItResumesIn) {
  // Resumed at step 7, inside the second window: the first gets an empty capture (so the second
  // is still nsys's second report), the second opens at once.
  std::size_t captures = 0;
  EXPECT_EQ(run_steps({{2, 4}, {6, 9}}, {7, 8, 9}, &captures), "7:start,stop,start, 8: 9:stop, ");
  EXPECT_EQ(captures, 2u);
  EXPECT_EQ(run_steps({{2, 4}, {6, 9}}, {3, 4, 5}, &captures), "3:start, 4:stop, 5: ");
  EXPECT_EQ(captures, 1u);
}

TEST(StepControllerWindows, AStepFromOneWindowIntoAnotherClosesAndOpensAtThatStep) {
  // Skipping from inside 3:5 to 6, inside 6:8: the first closes and the second opens at step 6.
  EXPECT_EQ(run_steps({{3, 5}, {6, 8}}, {3, 4, 6, 7, 8}), "3:start, 4: 6:stop,start, 7: 8:stop, ");
  // Adjacent windows 3:5 and 5:8: step 5 is the first outside the one and inside the other.
  EXPECT_EQ(run_steps({{3, 5}, {5, 8}}, {4, 5, 6, 8}), "4:start, 5:stop,start, 6: 8:stop, ");
  // From the first window straight into the third: the second gets an empty capture.
  std::size_t captures = 0;
  EXPECT_EQ(run_steps({{2, 4}, {5, 6}, {8, 10}}, {2, 9, 10}, &captures),
            "2:start, 9:stop,start,stop,start, 10:stop, ");
  EXPECT_EQ(captures, 3u);
}

TEST(StepControllerWindows, SkippedAndRepeatedStepsKeepAWindowOpen) {
  EXPECT_EQ(run_steps({{2, 4}, {6, 10}}, {2, 2, 3, 6, 9, 9, 10}),
            "2:start, 2: 3: 6:stop,start, 9: 9: 10:stop, ");
}

TEST(StepControllerWindows, AWindowAlreadyCapturedIsNotReopened) {
  // nsys numbers one capture per window (capture-range-end=repeat:N), so a step back into a
  // captured window only closes the open one; a later window still opens.
  std::size_t captures = 0;
  EXPECT_EQ(run_steps({{2, 4}, {6, 8}}, {2, 4, 3, 6, 2, 7}, &captures),
            "2:start, 4:stop, 3: 6:start, 2:stop, 7: ");
  EXPECT_EQ(captures, 2u);
}
