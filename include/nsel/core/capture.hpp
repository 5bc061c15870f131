// How capture is started and stopped inside a profiled process, and how nsys is told to match.
#pragma once

#include <string_view>

namespace nsel {

// automatic: CUDA profiler API when the node has a usable GPU, an NVTX capture range otherwise.
// none: no capture range at all; nsys records the whole process.
enum class CaptureMode { automatic, cuda, nvtx, none };

// User choice (forces the mode on every node): NSEL_CAPTURE=auto|cuda|nvtx|none.
inline constexpr std::string_view kCaptureVariable = "NSEL_CAPTURE";
// Set by `nsel exec` in the profiled program's environment so that its step controller uses
// exactly the mode nsys was started with. Not meant to be set by hand.
inline constexpr std::string_view kStepCaptureVariable = "NSEL_STEP_CAPTURE";
// Set by `nsel exec` where nsys needs it (NsysBehaviour::stop_collection_before_signal): how long
// a program stopped by a signal while its NVTX capture range is open keeps running after ending
// the range, so that nsys's injection hands the range's NVTX events over (milliseconds).
inline constexpr std::string_view kStepStopHandoverVariable = "NSEL_STEP_STOP_HANDOVER_MS";
// Set by `nsel exec`: a file of its own that the profiled program's step controller appends a
// line to when it takes control ("controlled") and each time it opens a capture ("opened"), so
// that a report nsys owes but never wrote is told from a window never reached.
inline constexpr std::string_view kStepRecordVariable = "NSEL_STEP_RECORD";
inline constexpr std::string_view kStepRecordControlled = "controlled";
inline constexpr std::string_view kStepRecordOpened = "opened";
// Appended by nsel's step nsel-as-started just before it executes the program: without it, the
// program has not begun, and nsys may be started again (nothing of the program is lost).
inline constexpr std::string_view kStepRecordBegan = "began";
// With it, "pid <n>": the program's process id (the step becomes the program in the same
// process), which nsys names the report for, even for a program that forks its work and exits.
inline constexpr std::string_view kStepRecordPid = "pid";
// The NVTX range the step controller opens for the window in nvtx mode.
inline constexpr std::string_view kNvtxCaptureRange = "nsel_capture";

std::string_view to_string(CaptureMode mode);

// Parses auto|cuda|nvtx|none; throws nsel::Error naming `source` otherwise.
CaptureMode parse_capture_mode(std::string_view value, std::string_view source);

}  // namespace nsel
