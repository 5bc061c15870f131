// The few CUDA driver entry points nsel needs, resolved from libcuda.so.1 at run time so that
// nothing links against CUDA (libcuda belongs to the node's driver, one per machine).
#pragma once

#include <string>

namespace nsel::detail {

struct CudaDriver {
  using Result = int;  // CUresult; 0 is CUDA_SUCCESS
  using Context = void*;
  Result (*init)(unsigned int) = nullptr;
  Result (*device_get_count)(int*) = nullptr;
  Result (*device_get)(int*, int) = nullptr;
  Result (*primary_ctx_retain)(Context*, int) = nullptr;
  Result (*ctx_get_current)(Context*) = nullptr;
  Result (*ctx_push_current)(Context) = nullptr;
  Result (*ctx_pop_current)(Context*) = nullptr;
  Result (*profiler_start)() = nullptr;
  Result (*profiler_stop)() = nullptr;

  // Loads libcuda.so.1 and resolves every entry point; on failure returns false and says why.
  bool load(std::string& why);
};

}  // namespace nsel::detail
