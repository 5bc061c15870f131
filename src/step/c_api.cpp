// The process-wide step controller behind the C ABI of nsel/nsel.h.
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "nsel/error.hpp"
#include "nsel/nsel.h"
#include "nsel/plan.hpp"
#include "nsel/settings.hpp"
#include "nsel/step.hpp"

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

// Installs a controller; the caller holds the mutex.
void install(StepWindow window, CaptureMode mode) {
  controller().emplace(window, make_capture_backend(mode));
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
    const StepWindow window = parse_step_window(*range, kStepRangeVariable);
    std::lock_guard lock(controller_mutex());
    install(window, mode);
  } catch (const Error& e) {
    std::fprintf(stderr, "nsel: warning: step control disabled: %s\n", e.what());
  }
}

}  // namespace
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
  try {
    const auto settings = nsel::ProfileSettings::from_environment(nsel::environment);
    nsel::PlanRequest request;
    request.worker = worker;
    const nsel::WorkerPlan plan = nsel::plan_worker(settings, request);
    if (!plan.profile) return 0;
    std::fprintf(stderr, "%s\n", plan.log_line().c_str());
    std::lock_guard lock(nsel::controller_mutex());
    if (!nsel::controller()) nsel::install(*settings.window, settings.capture);
    return 1;
  } catch (const nsel::Error& e) {
    std::fprintf(stderr, "nsel: error: %s\n", e.what());
    return -1;
  }
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

}  // extern "C"
