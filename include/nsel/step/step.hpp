// In-process step control: a state machine driven by step numbers, and its capture backends.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
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

// NeMo RL's maybe_gpu_profile_step as a state machine: at each step, capture opens when the step
// lies inside a window and capture is closed, and closes at the first step outside the window that
// opened it (or at exit). So a job resumed mid-window (window 3:7 resumed at step 4) captures
// steps 4, 5 and 6; skipped and repeated steps inside the window keep it open.
// Several windows (nsel's extension; NeMo RL has one): each window is captured at most once and
// in order, so that nsys's k-th capture (its k-th report with capture-range-end=repeat) always
// belongs to the k-th window; a window passed over gets an empty capture.
class StepController {
 public:
  enum class State { waiting, capturing, done };

  StepController(StepWindow window, std::unique_ptr<CaptureBackend> backend);
  // `windows` increasing and not overlapping, as parse_step_windows returns them; not empty.
  StepController(std::vector<StepWindow> windows, std::unique_ptr<CaptureBackend> backend);

  // Call at the start of step `step` (any order: resumed, skipped and repeated steps included).
  // Moving from one window straight into the next (3:5 then 5:8 at step 5, or 4 -> 6 across
  // 3:5,6:8) closes the first capture and opens the next at that same step.
  void on_step(long long step);
  // Closes capture if it is open (process exit, or an explicit finish). Windows not reached get
  // no capture and so no report.
  void finish();

  State state() const { return state_; }
  // The window captured, or last captured (the first before any capture).
  const StepWindow& window() const { return windows_[current_]; }
  const std::vector<StepWindow>& windows() const { return windows_; }
  // How many captures were opened so far, empty ones included (= reports nsys will write).
  std::size_t captures() const { return captures_; }

 private:
  bool open(std::size_t index);
  std::optional<std::size_t> window_of(long long step) const;

  std::vector<StepWindow> windows_;
  std::unique_ptr<CaptureBackend> backend_;
  State state_ = State::waiting;
  std::size_t current_ = 0;  // the window capture was opened for
  std::size_t next_ = 0;     // several windows: the first window not captured yet
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
