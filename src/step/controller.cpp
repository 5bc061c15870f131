#include "nsel/step/step.hpp"

#include <algorithm>

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

bool StepController::open(std::size_t index) {
  ++captures_;
  // A backend that cannot open capture ends everything: nothing will be captured, and the job
  // itself must go on untouched.
  if (backend_->start()) {
    current_ = index;
    return true;
  }
  state_ = State::done;
  return false;
}

std::optional<std::size_t> StepController::window_of(long long step) const {
  // Windows are increasing and do not overlap: the only candidate is the last one starting at or
  // before `step`.
  const auto after = std::upper_bound(
      windows_.begin(), windows_.end(), step,
      [](long long value, const StepWindow& window) { return value < window.start; });
  if (after == windows_.begin()) return std::nullopt;
  const std::size_t index = static_cast<std::size_t>(after - windows_.begin()) - 1;
  if (!windows_[index].contains(step)) return std::nullopt;
  return index;
}

void StepController::on_step(long long step) {
  if (state_ == State::done) return;
  const std::optional<std::size_t> inside = window_of(step);
  if (state_ == State::capturing) {
    // Skipped and repeated steps inside the open window keep it open.
    if (inside == current_) return;
    backend_->stop();
    state_ = State::waiting;
    // Several windows: each is captured once, so once the last one closed nothing can open.
    if (windows_.size() > 1 && next_ == windows_.size()) {
      state_ = State::done;
      return;
    }
  }
  if (!inside) return;
  if (windows_.size() == 1) {
    // NeMo RL's rule exactly: any step inside the window opens it when it is closed, also a step
    // that comes back after the window was left.
    if (open(0)) state_ = State::capturing;
    return;
  }
  // Several windows (nsel's extension): nsys numbers the captures (capture-range-end=repeat:N),
  // so the k-th capture must be the k-th window. A window already captured stays closed, and a
  // window passed over gets an empty capture.
  if (*inside < next_) return;
  for (; next_ < *inside; ++next_) {
    if (!open(next_)) return;
    backend_->stop();
  }
  next_ = *inside + 1;
  if (open(*inside)) state_ = State::capturing;
}

void StepController::finish() {
  if (state_ == State::capturing) backend_->stop();
  state_ = State::done;
}

}  // namespace nsel
