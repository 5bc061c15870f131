#include <linux/futex.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "nsel/core/capture.hpp"
#include "nsel/step/gpu_probe.hpp"
#include "nsel/step/step.hpp"
#include "step/cuda_driver.hpp"

namespace nsel {
namespace {

// nsys's injection hands an NVTX range's events over only after the capture range has ended
// (2023.4 taking up to about a second): a program killed before that loses them all (measured,
// docs/nsys-facts.md "Stopping a profiled worker"). Where `nsel exec` asks for it, a stop signal
// that comes while the range is open therefore ends the range, waits that long, and then ends the
// program the default way. Only for signals the program left at their default action.
constexpr int kHandedOverSignals[] = {SIGTERM, SIGINT, SIGHUP};
std::atomic<nvtxRangeId_t> g_open_range{0};
long g_handover_ms = -1;  // read once, before any handler is installed

long handover_ms() {
  if (g_handover_ms < 0) {
    const char* value = std::getenv(std::string(kStepStopHandoverVariable).c_str());
    char* end = nullptr;
    const long ms = value == nullptr ? 0 : std::strtol(value, &end, 10);
    g_handover_ms = (value != nullptr && *end == '\0' && ms > 0 && ms <= 60000) ? ms : 0;
  }
  return g_handover_ms;
}

// Once nsys itself has ended (a batch system's SIGTERM reaches it too, and 2023.4 then ends at
// once), nvtxRangeEnd in nsys's injection can wait for it for good: the program never dies of the
// signal it was sent (seen 60 s after a scancel). A watchdog thread, started with the first
// capture, bounds that call and then ends the program by the same signal. A thread rather than a
// timer signal: SIGALRM and the process's timers are the program's own. It and the handler meet
// through raw futex calls: nsys's OS runtime trace records libc's semaphore and sleep calls, and
// the watchdog's wait would otherwise lie across the user's whole capture in the report.
constexpr int kSignalRangeEndDeadlineSeconds = 3;  // the message below says 3 s
std::atomic<int> g_stop_began{0};                  // set by the handler as it calls nvtxRangeEnd
std::atomic<int> g_range_ended{0};  // set by the handler once nvtxRangeEnd has returned
volatile sig_atomic_t g_dying_of = 0;

// FUTEX_WAIT while `word` is 0; `timeout` relative, or null for none.
void futex_wait_while_zero(std::atomic<int>& word, const timespec* timeout) {
  syscall(SYS_futex, reinterpret_cast<int*>(&word), FUTEX_WAIT_PRIVATE, 0, timeout, nullptr, 0);
}

void futex_set_and_wake(std::atomic<int>& word) {
  word.store(1);
  syscall(SYS_futex, reinterpret_cast<int*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void* watch_the_range_end(void*) {
  while (g_stop_began.load() == 0) futex_wait_while_zero(g_stop_began, nullptr);
  timespec started{};
  clock_gettime(CLOCK_MONOTONIC, &started);
  while (g_range_ended.load() == 0) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const long long left_ns =
        (started.tv_sec + kSignalRangeEndDeadlineSeconds - now.tv_sec) * 1000000000LL +
        (started.tv_nsec - now.tv_nsec);
    if (left_ns > 0) {
      const timespec left{static_cast<time_t>(left_ns / 1000000000LL),
                          static_cast<long>(left_ns % 1000000000LL)};
      futex_wait_while_zero(g_range_ended, &left);
      continue;
    }
    // write(2), not stdio: the interrupted thread may hold stderr's lock.
    constexpr char kSaid[] =
        "nsel: nsys did not acknowledge the end of the NVTX capture range within 3 s of the stop "
        "signal (nsys has ended?); the program ends now\n";
    ssize_t ignored = write(STDERR_FILENO, kSaid, sizeof kSaid - 1);
    (void)ignored;
    const int signal_number = g_dying_of;
    signal(signal_number, SIG_DFL);
    sigset_t dying;
    sigemptyset(&dying);
    sigaddset(&dying, signal_number);
    pthread_sigmask(SIG_UNBLOCK, &dying, nullptr);
    raise(signal_number);  // its default action ends the whole process
  }
  return nullptr;
}

// Once per process, from the thread that opens the first capture (not from a handler).
void start_range_end_watchdog() {
  static const bool started = [] {
    // Every signal blocked: the program's signals go to its own threads, never to this one.
    sigset_t all;
    sigset_t before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    pthread_t thread{};
    const bool created = pthread_create(&thread, nullptr, watch_the_range_end, nullptr) == 0;
    if (created) {
      pthread_setname_np(thread, "nsel-watchdog");
      pthread_detach(thread);
    }
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    return created;
  }();
  (void)started;
}

void end_range_then_die(int signal_number) {
  const nvtxRangeId_t range = g_open_range.exchange(0);
  if (range != 0) {
    g_dying_of = signal_number;
    futex_set_and_wake(g_stop_began);
    nvtxRangeEnd(range);
    futex_set_and_wake(g_range_ended);
    timespec wait{g_handover_ms / 1000, (g_handover_ms % 1000) * 1000000L};
    while (nanosleep(&wait, &wait) != 0) {
    }
  }
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

void hand_over_on_stop_signals() {
  if (handover_ms() == 0) return;
  start_range_end_watchdog();
  for (int signal_number : kHandedOverSignals) {
    struct sigaction current {};
    if (sigaction(signal_number, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction action {};
    action.sa_handler = end_range_then_die;
    sigemptyset(&action.sa_mask);
    for (int other : kHandedOverSignals) sigaddset(&action.sa_mask, other);
    sigaction(signal_number, &action, nullptr);
  }
}

void leave_stop_signals() {
  if (handover_ms() == 0) return;
  for (int signal_number : kHandedOverSignals) {
    struct sigaction current {};
    if (sigaction(signal_number, nullptr, &current) == 0 &&
        current.sa_handler == end_range_then_die) {
      signal(signal_number, SIG_DFL);
    }
  }
}

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
    g_open_range.store(range_);
    hand_over_on_stop_signals();
    return true;
  }
  // Nsight Systems 2022.4 can block nvtxRangeEnd forever when its agent hangs at the end of the
  // capture range (seen with CPU context-switch tracing on, which the plan now turns off); the
  // job must go on even though that report is then lost.
  void stop() override {
    // A stop signal's handler may have ended the range already.
    if (g_open_range.exchange(0) == 0) return;
    leave_stop_signals();
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
