#include <nvtx3/nvToolsExt.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "nsel/step/gpu_probe.hpp"
#include "nsel/step/step.hpp"
#include "step/cuda_driver.hpp"

namespace nsel {
namespace {

class NoCapture final : public CaptureBackend {
 public:
  bool start() override { return true; }
  void stop() override {}
  std::string_view name() const override { return "none"; }
};

// A process-wide (not thread-bound) range, so the window may close on another thread or in an
// exit handler; nsys's --capture-range=nvtx --nvtx-capture=<name> captures exactly inside it.
class NvtxCapture final : public CaptureBackend {
 public:
  bool start() override {
    range_ = nvtxRangeStartA(std::string(kNvtxCaptureRange).c_str());
    return true;
  }
  // Nsight Systems 2022.4 can block nvtxRangeEnd forever when its agent hangs at the end of the
  // capture range (seen with CPU context-switch tracing on, which the plan now turns off); the
  // job must go on even though that report is then lost.
  void stop() override {
    const nvtxRangeId_t range = range_;
    if (!call_with_deadline([range] { nvtxRangeEnd(range); }, kCaptureStopDeadline)) {
      std::fprintf(stderr,
                   "nsel: warning: nsys did not acknowledge the end of the NVTX capture range "
                   "within %lld s (a known Nsight Systems hang); the job goes on, this process's "
                   "report may be lost\n",
                   static_cast<long long>(kCaptureStopDeadline.count()));
    }
  }
  std::string_view name() const override { return "nvtx"; }

 private:
  nvtxRangeId_t range_ = 0;
};

// cuProfilerStart/Stop act on the calling thread's current context. The context a CUDA runtime
// (PyTorch's own copy included) uses is the device's primary context, so when none is current
// yet we retain the primary context of the first visible device: the same one the runtime uses.
class CudaProfilerCapture final : public CaptureBackend {
 public:
  bool start() override {
    std::string why;
    if (!driver_.load(why)) return fail(why);
    if (int rc = driver_.init(0); rc != 0) return fail("cuInit: CUDA error " + std::to_string(rc));
    if (int rc = driver_.ctx_get_current(&context_); rc != 0 || context_ == nullptr) {
      int device = 0;
      if (int rc2 = driver_.device_get(&device, 0); rc2 != 0) {
        return fail("cuDeviceGet: CUDA error " + std::to_string(rc2));
      }
      if (int rc2 = driver_.primary_ctx_retain(&context_, device); rc2 != 0) {
        return fail("cuDevicePrimaryCtxRetain: CUDA error " + std::to_string(rc2));
      }
    }
    return with_context([&] { return driver_.profiler_start(); }, "cuProfilerStart");
  }
  void stop() override {
    if (context_ != nullptr)
      with_context([&] { return driver_.profiler_stop(); }, "cuProfilerStop");
  }
  std::string_view name() const override { return "cuda"; }

 private:
  template <typename Call>
  bool with_context(Call call, const char* what) {
    if (driver_.ctx_push_current(context_) != 0) return fail(std::string(what) + ": no context");
    const int rc = call();
    void* popped = nullptr;
    driver_.ctx_pop_current(&popped);
    if (rc != 0) return fail(std::string(what) + ": CUDA error " + std::to_string(rc));
    return true;
  }
  bool fail(const std::string& why) {
    std::fprintf(stderr, "nsel: warning: CUDA profiler capture unavailable: %s\n", why.c_str());
    return false;
  }

  detail::CudaDriver driver_;
  detail::CudaDriver::Context context_ = nullptr;
};

}  // namespace

bool call_with_deadline(std::function<void()> call, std::chrono::milliseconds timeout) {
  // Shared so that a helper left behind still has somewhere to report to.
  struct Shared {
    std::mutex mutex;
    std::condition_variable done_signal;
    bool done = false;
  };
  auto shared = std::make_shared<Shared>();
  std::thread([shared, call = std::move(call)] {
    call();
    std::lock_guard lock(shared->mutex);
    shared->done = true;
    shared->done_signal.notify_all();
  }).detach();
  std::unique_lock lock(shared->mutex);
  return shared->done_signal.wait_for(lock, timeout, [&] { return shared->done; });
}

std::unique_ptr<CaptureBackend> make_capture_backend(CaptureMode mode) {
  switch (resolve_capture_mode(
      mode, mode == CaptureMode::automatic ? probe_gpu_in_process() : GpuProbe{})) {
    case CaptureMode::cuda:
      return std::make_unique<CudaProfilerCapture>();
    case CaptureMode::nvtx:
      return std::make_unique<NvtxCapture>();
    case CaptureMode::none:
    case CaptureMode::automatic:
      break;
  }
  return std::make_unique<NoCapture>();
}

}  // namespace nsel
