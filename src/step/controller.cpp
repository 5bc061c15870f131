#include "nsel/step/step.hpp"

namespace nsel {

StepController::StepController(StepWindow window, std::unique_ptr<CaptureBackend> backend)
    : StepController(std::vector<StepWindow>{window}, std::move(backend)) {}

StepController::StepController(std::vector<StepWindow> windows,
                               std::unique_ptr<CaptureBackend> backend)
    : windows_(std::move(windows)), backend_(std::move(backend)) {
  if (windows_.empty()) {
    windows_.push_back(StepWindow{});  // window() stays valid
    state_ = State::done;
  }
}

bool StepController::open_current() {
  ++captures_;
  // A backend that cannot open capture ends everything: nothing will be captured, and the job
  // itself must go on untouched.
  if (backend_->start()) return true;
  state_ = State::done;
  return false;
}

void StepController::on_step(long long step) {
  if (state_ == State::capturing && step >= windows_[current_].stop) {
    backend_->stop();
    if (current_ + 1 == windows_.size()) {
      state_ = State::done;
      return;
    }
    ++current_;
    state_ = State::waiting;  // the next window may open at this very step
  }
  if (state_ != State::waiting) return;
  for (std::size_t next = current_; next < windows_.size(); ++next) {
    if (step != windows_[next].start) continue;
    // Windows passed over get an empty capture each, so that nsys's numbering stays aligned.
    for (; current_ < next; ++current_) {
      if (!open_current()) return;
      backend_->stop();
    }
    if (open_current()) state_ = State::capturing;
    return;
  }
}

void StepController::finish() {
  if (state_ == State::capturing) backend_->stop();
  state_ = State::done;
}

}  // namespace nsel
