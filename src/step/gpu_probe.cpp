#include "nsel/step/gpu_probe.hpp"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

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
  int fds[2];
  if (pipe(fds) != 0) return {false, std::string("pipe: ") + std::strerror(errno)};
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return {false, std::string("fork: ") + std::strerror(errno)};
  }
  if (child == 0) {
    close(fds[0]);
    const GpuProbe probe = probe_gpu_in_process();
    const std::string message = (probe.usable ? "1" : "0") + probe.detail;
    ssize_t ignored = write(fds[1], message.data(), message.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string message;
  char buffer[256];
  // A wedged driver must not hang a launch: give it a few seconds, then say so.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  bool timed_out = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd descriptor{fds[0], POLLIN, 0};
    if (poll(&descriptor, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    message.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return {false, "the CUDA driver did not answer within 15 s"};
  if (message.empty()) return {false, "the GPU probe ended without an answer"};
  return {message.front() == '1', message.substr(1)};
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
