// The process-wide step controller behind the C ABI of nsel/nsel.h.
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "nsel/core/error.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/settings.hpp"
#include "nsel/nsel.h"
#include "nsel/step/step.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/host.hpp"

extern "C" {
int nsel_step_control_active_ = 0;
}

namespace nsel {
namespace {

std::mutex& controller_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Never destroyed: the exit handler may run after other static objects are gone.
std::optional<StepController>& controller() {
  static auto* instance = new std::optional<StepController>();
  return *instance;
}

std::optional<std::string> environment(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

void set_active(bool active) {
  __atomic_store_n(&nsel_step_control_active_, active ? 1 : 0, __ATOMIC_RELAXED);
}

void finish_at_exit() {
  nsel_finish();
}

// Under `nsel exec`, tells its step record (kStepRecordVariable) each capture opened: the
// launcher then knows that nsys owes a report.
class RecordedBackend : public CaptureBackend {
 public:
  RecordedBackend(std::unique_ptr<CaptureBackend> inner, std::string record)
      : inner_(std::move(inner)), record_(std::move(record)) {}
  bool start() override {
    if (!inner_->start()) return false;
    append_to_own_file(record_, std::string(kStepRecordOpened) + "\n");
    return true;
  }
  void stop() override { inner_->stop(); }
  std::string_view name() const override { return inner_->name(); }

 private:
  std::unique_ptr<CaptureBackend> inner_;
  std::string record_;
};

// Installs a controller; the caller holds the mutex.
void install(std::vector<StepWindow> windows, CaptureMode mode) {
  std::unique_ptr<CaptureBackend> backend = make_capture_backend(mode);
  if (const auto record = environment(kStepRecordVariable); record && !record->empty()) {
    append_to_own_file(*record, std::string(kStepRecordControlled) + "\n");
    backend = std::make_unique<RecordedBackend>(std::move(backend), *record);
  }
  controller().emplace(std::move(windows), std::move(backend));
  static bool exit_handler = (std::atexit(finish_at_exit), true);
  (void)exit_handler;
  set_active(true);
}

// `nsel exec` tells a profiled program how nsys will capture; only then is the process
// controlled without any call from the program but nsel_step().
__attribute__((constructor)) void init_from_launcher() {
  const auto capture = environment(kStepCaptureVariable);
  if (!capture) return;
  try {
    const CaptureMode mode = parse_capture_mode(*capture, kStepCaptureVariable);
    const auto range = environment(kStepRangeVariable);
    if (!range) {
      throw Error(std::string(kStepCaptureVariable) + " is set but " +
                  std::string(kStepRangeVariable) + " is not");
    }
    std::vector<StepWindow> windows = parse_step_windows(*range, kStepRangeVariable);
    std::lock_guard lock(controller_mutex());
    install(std::move(windows), mode);
  } catch (const Error& e) {
    std::fprintf(stderr, "nsel: warning: step control disabled: %s\n", e.what());
  }
}

}  // namespace

int init_worker(std::string_view worker, const IdentityOverrides& identity) {
  try {
    const auto settings = ProfileSettings::from_environment(environment);
    PlanRequest request;
    request.worker = std::string(worker);
    request.identity = identify_process(environment, identity, host_name());
    const WorkerPlan plan = plan_worker(settings, request);
    if (!plan.notice.empty()) std::fprintf(stderr, "%s\n", plan.notice.c_str());
    if (!plan.profile) return 0;
    std::fprintf(stderr, "%s\n", plan.log_line().c_str());
    std::lock_guard lock(controller_mutex());
    if (!controller()) install(settings.windows, settings.capture);
    return 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "nsel: error: %s\n", e.what());
    return -1;
  }
}

}  // namespace nsel

extern "C" {

void nsel_step_begin(long long step) {
  // Bindings call this directly: an inactive process pays one load and one branch here too.
  if (__atomic_load_n(&nsel_step_control_active_, __ATOMIC_RELAXED) == 0) return;
  std::lock_guard lock(nsel::controller_mutex());
  auto& controller = nsel::controller();
  if (!controller) return;
  controller->on_step(step);
  if (controller->state() == nsel::StepController::State::done) nsel::set_active(false);
}

int nsel_init_worker(const char* worker) {
  if (worker == nullptr) return -1;
  return nsel::init_worker(worker, {});
}

int nsel_init_worker_rank(const char* worker, long long rank, long long local_rank) {
  if (worker == nullptr) return -1;
  nsel::IdentityOverrides identity;
  if (rank >= 0) identity.rank = rank;
  if (local_rank >= 0) identity.local_rank = local_rank;
  return nsel::init_worker(worker, identity);
}

void nsel_finish(void) {
  std::lock_guard lock(nsel::controller_mutex());
  auto& controller = nsel::controller();
  if (controller) controller->finish();
  nsel::set_active(false);
}

int nsel_capturing(void) {
  std::lock_guard lock(nsel::controller_mutex());
  const auto& controller = nsel::controller();
  return controller && controller->state() == nsel::StepController::State::capturing ? 1 : 0;
}

// Plain NVTX push/pop (the ASCII form, registered with no domain): what both Nsight Systems
// generations here record, whatever a Python NVTX package does.
void nsel_range_push(const char* name) {
  nvtxRangePushA(name == nullptr ? "" : name);
}

void nsel_range_pop(void) {
  nvtxRangePop();
}

}  // extern "C"
