// Whether this node has a usable GPU, asked of the CUDA driver loaded at run time.
#pragma once

#include <string>

#include "nsel/core/capture.hpp"

namespace nsel {

struct GpuProbe {
  bool usable = false;
  std::string detail;  // "1 CUDA device", or why not ("libcuda.so.1 not found", "cuInit: 100")
};

// Asks the driver in a child process, so the caller's process gets no CUDA state or threads.
// Call it only while single-threaded (a command-line front end, not a training process).
GpuProbe probe_gpu_isolated();

// Asks the driver in this process (for processes that will use CUDA anyway).
GpuProbe probe_gpu_in_process();

// automatic -> cuda when `probe` says a GPU is usable, nvtx otherwise; other modes unchanged.
CaptureMode resolve_capture_mode(CaptureMode requested, const GpuProbe& probe);

// The same for this node, asking the driver (isolated) only when `requested` is automatic.
CaptureMode resolve_node_capture_mode(CaptureMode requested);

}  // namespace nsel
