#include "nsel/core/capture.hpp"

#include "nsel/core/error.hpp"

namespace nsel {

std::string_view to_string(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::automatic:
      return "auto";
    case CaptureMode::cuda:
      return "cuda";
    case CaptureMode::nvtx:
      return "nvtx";
    case CaptureMode::none:
      return "none";
  }
  return "auto";
}

CaptureMode parse_capture_mode(std::string_view value, std::string_view source) {
  for (CaptureMode mode :
       {CaptureMode::automatic, CaptureMode::cuda, CaptureMode::nvtx, CaptureMode::none}) {
    if (value == to_string(mode)) return mode;
  }
  throw Error(bad_value(source, value, "unknown capture mode",
                        "one of 'auto' (CUDA profiler API with a GPU, NVTX range without), "
                        "'cuda', 'nvtx', 'none'"));
}

}  // namespace nsel
