#include "nsel/step.hpp"

namespace nsel {

StepController::StepController(StepWindow window, std::unique_ptr<CaptureBackend> backend)
    : window_(window), backend_(std::move(backend)) {}

void StepController::on_step(long long step) {
  if (state_ == State::waiting && step == window_.start) {
    // A backend that cannot open capture ends the window: nothing will be captured, and the
    // job itself must go on untouched.
    state_ = backend_->start() ? State::capturing : State::done;
  } else if (state_ == State::capturing && step >= window_.stop) {
    backend_->stop();
    state_ = State::done;
  }
}

void StepController::finish() {
  if (state_ == State::capturing) backend_->stop();
  state_ = State::done;
}

}  // namespace nsel
