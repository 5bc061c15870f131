// In-process step control: a state machine driven by step numbers, and its capture backends.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "nsel/capture.hpp"
#include "nsel/nsel.h"
#include "nsel/step_window.hpp"

namespace nsel {

// Starts and stops capture in this process. start() returns false when capture could not be
// opened (the reason has been printed once).
class CaptureBackend {
 public:
  virtual ~CaptureBackend() = default;
  virtual bool start() = 0;
  virtual void stop() = 0;
  virtual std::string_view name() const = 0;
};

// cuda: cuProfilerStart/Stop from libcuda.so.1, loaded at run time; nvtx: an NVTX range named
// kNvtxCaptureRange spanning the window; none: does nothing. `automatic` is resolved on this node.
std::unique_ptr<CaptureBackend> make_capture_backend(CaptureMode mode);

class StepController {
 public:
  enum class State { waiting, capturing, done };

  StepController(StepWindow window, std::unique_ptr<CaptureBackend> backend);

  // Call at the start of step `step`: opens capture when step == start, closes it when
  // step >= stop (the contract: steps start..stop-1 are inside).
  void on_step(long long step);
  // Closes capture if it is open (process exit, or an explicit finish).
  void finish();

  State state() const { return state_; }
  const StepWindow& window() const { return window_; }

 private:
  StepWindow window_;
  std::unique_ptr<CaptureBackend> backend_;
  State state_ = State::waiting;
};

// Runs `call` on a helper thread and waits at most `timeout`; true when it returned in time.
// A call still running then is left behind (detached): used where nsys can block a caller for
// good, so that a training process never stalls on the profiler.
bool call_with_deadline(std::function<void()> call, std::chrono::milliseconds timeout);

// How long the end of an NVTX capture range may take before the process goes on without it.
inline constexpr std::chrono::seconds kCaptureStopDeadline{30};

// C++ spelling of the C ABI's nsel_step(): one predictable branch when inactive.
inline void step(long long number) noexcept {
  nsel_step(number);
}

}  // namespace nsel
