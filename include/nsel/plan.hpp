// The plan for one worker: whether it is profiled, why, and the exact nsys command.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nsel/capture.hpp"
#include "nsel/nsys_options.hpp"
#include "nsel/settings.hpp"
#include "nsel/step_window.hpp"

namespace nsel {

struct PlanRequest {
  std::string worker;
  // The node's capture mode, already resolved (never automatic): see nsel::detect_capture_mode.
  CaptureMode node_capture = CaptureMode::nvtx;
  std::string output_dir;            // empty: nsys's working directory
  std::vector<std::string> program;  // PROGRAM ARGS..., may be empty for a preview
  std::string nsys = "nsys";
};

struct WorkerPlan {
  std::string worker;
  bool profile = false;
  std::optional<std::string> pattern;  // the first matching pattern
  std::optional<StepWindow> window;
  CaptureMode capture = CaptureMode::none;  // what the step controller will do
  NsysOptions options;
  std::vector<std::string> command;  // nsys profile ... PROGRAM ARGS, or PROGRAM ARGS
  // Variables the profiled program must see (NAME=value), so its step controller agrees with
  // the capture options given to nsys.
  std::vector<std::string> environment;
  std::string reason;  // one sentence: why it is or is not profiled

  // "Nsight profiling enabled for worker '<worker>' (matched pattern '<pattern>')"
  std::string log_line() const;
};

WorkerPlan plan_worker(const ProfileSettings& settings, const PlanRequest& request);

}  // namespace nsel
