// In-process step control: a state machine driven by step numbers, and its capture backends.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/capture.hpp"
#include "nsel/core/rank_selection.hpp"
#include "nsel/core/step_window.hpp"
#include "nsel/nsel.h"

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

// Goes through the windows in order, one capture per window, so that nsys's k-th capture (its
// k-th report with capture-range-end=repeat) always belongs to the k-th window.
class StepController {
 public:
  enum class State { waiting, capturing, done };

  StepController(StepWindow window, std::unique_ptr<CaptureBackend> backend);
  // `windows` increasing and not overlapping, as parse_step_windows returns them; not empty.
  StepController(std::vector<StepWindow> windows, std::unique_ptr<CaptureBackend> backend);

  // Call at the start of step `step`: opens capture when step == start of the current window,
  // closes it when step >= its stop (the contract: steps start..stop-1 are inside), then waits
  // for the next window (which may open at that same step). A window whose start step never
  // came, while a later one's does, gets an empty capture first: its report then holds no
  // steps, and every later report still lands under its own window's name.
  void on_step(long long step);
  // Closes capture if it is open (process exit, or an explicit finish). Windows not reached get
  // no capture and so no report.
  void finish();

  State state() const { return state_; }
  // The window being waited for or captured (the last one once done).
  const StepWindow& window() const { return windows_[current_]; }
  const std::vector<StepWindow>& windows() const { return windows_; }
  // How many captures were opened so far, empty ones included (= reports nsys will write).
  std::size_t captures() const { return captures_; }

 private:
  bool open_current();

  std::vector<StepWindow> windows_;
  std::unique_ptr<CaptureBackend> backend_;
  State state_ = State::waiting;
  std::size_t current_ = 0;
  std::size_t captures_ = 0;
};

// Runs `call` on a helper thread and waits at most `timeout`; true when it returned in time.
// A call still running then is left behind (detached): used where nsys can block a caller for
// good, so that a training process never stalls on the profiler.
bool call_with_deadline(std::function<void()> call, std::chrono::milliseconds timeout);

// How long the end of an NVTX capture range may take before the process goes on without it.
inline constexpr std::chrono::seconds kCaptureStopDeadline{30};

// For processes launched without `nsel exec` (a Ray actor, for instance): reads the settings and
// enables step control when `worker`, with this rank, local rank and node, is selected. What
// `identity` gives wins over RANK, LOCAL_RANK, ... and the host name. Returns 1 when selected,
// 0 when not (a matched worker left out because its rank is unknown says so on stderr), -1 when
// the settings are invalid (one line on stderr).
int init_worker(std::string_view worker, const IdentityOverrides& identity = {});

// C++ spelling of the C ABI's nsel_step(): one predictable branch when inactive.
inline void step(long long number) noexcept {
  nsel_step(number);
}

}  // namespace nsel
