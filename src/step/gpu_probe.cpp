#include "nsel/step/gpu_probe.hpp"

#include <dlfcn.h>

#include <chrono>

#include "nsel/sys/process.hpp"
#include "step/cuda_driver.hpp"

namespace nsel {
namespace detail {

bool CudaDriver::load(std::string& why) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    why = "libcuda.so.1 not found (no NVIDIA driver on this node)";
    return false;
  }
  const auto resolve = [&](auto& slot, const char* symbol) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(library, symbol));
    if (slot == nullptr) why = std::string("libcuda.so.1 lacks ") + symbol;
    return slot != nullptr;
  };
  return resolve(init, "cuInit") && resolve(device_get_count, "cuDeviceGetCount") &&
         resolve(device_get, "cuDeviceGet") &&
         resolve(primary_ctx_retain, "cuDevicePrimaryCtxRetain") &&
         resolve(ctx_get_current, "cuCtxGetCurrent") &&
         resolve(ctx_push_current, "cuCtxPushCurrent_v2") &&
         resolve(ctx_pop_current, "cuCtxPopCurrent_v2") &&
         resolve(profiler_start, "cuProfilerStart") && resolve(profiler_stop, "cuProfilerStop");
}

}  // namespace detail

GpuProbe probe_gpu_in_process() {
  GpuProbe probe;
  detail::CudaDriver driver;
  if (!driver.load(probe.detail)) return probe;
  if (int rc = driver.init(0); rc != 0) {
    probe.detail = "cuInit failed with CUDA error " + std::to_string(rc) + " (no usable GPU)";
    return probe;
  }
  int count = 0;
  if (int rc = driver.device_get_count(&count); rc != 0 || count <= 0) {
    probe.detail = "no CUDA device visible";
    return probe;
  }
  probe.usable = true;
  probe.detail = std::to_string(count) + (count == 1 ? " CUDA device" : " CUDA devices");
  return probe;
}

GpuProbe probe_gpu_isolated() {
  // A crashing driver takes only the child with it; a wedged one must not hang a launch: give it
  // a few seconds, then say so. The answer is "1" or "0" (usable or not), then the detail.
  const ChildAnswer answer = run_in_child(
      [] {
        const GpuProbe probe = probe_gpu_in_process();
        return (probe.usable ? "1" : "0") + probe.detail;
      },
      std::chrono::seconds(15));
  if (!answer.problem.empty()) return {false, answer.problem};
  if (answer.timed_out) return {false, "the CUDA driver did not answer within 15 s"};
  if (answer.output.empty()) return {false, "the GPU probe ended without an answer"};
  return {answer.output.front() == '1', answer.output.substr(1)};
}

CaptureMode resolve_capture_mode(CaptureMode requested, const GpuProbe& probe) {
  if (requested != CaptureMode::automatic) return requested;
  return probe.usable ? CaptureMode::cuda : CaptureMode::nvtx;
}

CaptureMode resolve_node_capture_mode(CaptureMode requested) {
  if (requested != CaptureMode::automatic) return requested;
  return resolve_capture_mode(requested, probe_gpu_isolated());
}

}  // namespace nsel
