// nsel._nsel: the C++ library for Python (Ray drivers, Ray's runtime-env agent, Python workers).
// The Python files of the package only re-export and glue; the logic stays in the library.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <string>

#include "nsel/command_line.hpp"
#include "nsel/error.hpp"
#include "nsel/gpu_probe.hpp"
#include "nsel/nsel.h"
#include "nsel/plan.hpp"
#include "nsel/ray_patch.hpp"
#include "nsel/ray_runtime_env.hpp"
#include "nsel/settings.hpp"

namespace nb = nanobind;

namespace {

std::optional<std::string> environment(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// A step that has begun; as a context manager it also marks the step with the NVTX range
// "step <n>" that reports and summaries look for.
class Step {
 public:
  explicit Step(long long number) : number_(number) {}
  long long number() const { return number_; }
  Step& enter() {
    const std::string name = "step " + std::to_string(number_);
    nvtxRangePushA(name.c_str());
    return *this;
  }
  void exit() { nvtxRangePop(); }

 private:
  long long number_;
};

// The plan for `worker` from this process's environment, with the capture mode of this node.
nsel::WorkerPlan plan_here(const std::string& worker, const std::string& output_dir,
                           bool probe_node = true) {
  const auto settings = nsel::ProfileSettings::from_environment(environment);
  nsel::PlanRequest request;
  request.worker = worker;
  request.output_dir = output_dir;
  // In process: a driver or agent is multi-threaded, so no fork; it loads the driver only when
  // the capture mode is automatic and the worker is selected.
  request.node_capture = settings.capture;
  if (probe_node && settings.enabled() && settings.patterns->first_match(worker) &&
      settings.capture == nsel::CaptureMode::automatic) {
    request.node_capture =
        nsel::resolve_capture_mode(settings.capture, nsel::probe_gpu_in_process());
  }
  return nsel::plan_worker(settings, request);
}

nb::dict plan_to_dict(const nsel::WorkerPlan& plan) {
  nb::dict out;
  out["worker"] = plan.worker;
  out["profile"] = plan.profile;
  out["pattern"] = plan.pattern;
  out["step_range"] = plan.window ? std::optional<std::string>(plan.window->text()) : std::nullopt;
  out["capture"] = std::string(nsel::to_string(plan.capture));
  out["options"] = plan.options.entries();
  out["command"] = plan.command;
  out["environment"] = plan.environment;
  out["reason"] = plan.reason;
  out["log_line"] = plan.profile ? plan.log_line() : std::string();
  return out;
}

nsel::RayPatchAction parse_action(const std::string& action) {
  if (action == "apply") return nsel::RayPatchAction::apply;
  if (action == "check") return nsel::RayPatchAction::check;
  if (action == "revert") return nsel::RayPatchAction::revert;
  throw nsel::Error(nsel::bad_value("action", action, "unknown action", "apply, check or revert"));
}

}  // namespace

NB_MODULE(_nsel, m) {
  m.doc() = "nsel's C++ library: worker selection, step control, Ray integration.";
  nb::exception<nsel::Error>(m, "Error", PyExc_ValueError);

  nb::class_<Step>(m, "Step", "A training step that has begun (see step()).")
      .def_prop_ro("number", &Step::number)
      .def("__enter__", &Step::enter, nb::rv_policy::reference)
      .def("__exit__", [](Step& self, nb::args) { self.exit(); });

  m.def(
      "step",
      [](long long number) {
        nsel_step_begin(number);
        return Step(number);
      },
      nb::arg("number"), nb::call_guard<nb::gil_scoped_release>(),
      "Begins step `number` (1-based): opens capture at the window's start and closes it at its "
      "stop. Use it as `with nsel.step(n):` to also mark the step with the NVTX range 'step n'.");
  m.def(
      "init_worker", [](const std::string& worker) { return nsel_init_worker(worker.c_str()); },
      nb::arg("worker"),
      "For a process not started by `nsel exec`: reads the selection variables and enables step "
      "control when `worker` is selected. 1 selected, 0 not, -1 invalid settings.");
  m.def("finish", &nsel_finish, nb::call_guard<nb::gil_scoped_release>(),
        "Closes an open capture window now (also done at exit).");
  m.def(
      "capturing", [] { return nsel_capturing() != 0; }, "True while the capture window is open.");

  m.def(
      "plan_dict",
      [](const std::string& worker, const std::string& output_dir, bool probe_node) {
        return plan_to_dict(plan_here(worker, output_dir, probe_node));
      },
      nb::arg("worker"), nb::arg("output_dir") = "", nb::arg("probe_node") = true,
      "What `nsel plan --json` says about `worker`, from this process's environment.");
  m.def(
      "nsight_options",
      [](const std::string& worker) {
        const nsel::WorkerPlan plan = plan_here(worker, "");
        return std::make_pair(plan_to_dict(plan), nsel::ray_nsight_options(plan));
      },
      nb::arg("worker"));
  m.def("plugin_executable", &nsel::ray_plugin_executable, nb::arg("nsel_binary"),
        nb::arg("worker"), nb::arg("output_dir"), nb::arg("py_executable"),
        nb::arg("environment") = std::vector<std::string>());
  m.def("shell_join", &nsel::shell_join, nb::arg("argv"));
  m.def("forwarded_variables", [] {
    std::vector<std::string> out;
    for (std::string_view name : nsel::kForwardedVariables) out.emplace_back(name);
    return out;
  });

  m.def(
      "ray_nsight_file",
      [](const std::string& site_packages) {
        return nsel::ray_nsight_file(site_packages).string();
      },
      nb::arg("site_packages"));
  m.def(
      "patch_ray_nsight_file",
      [](const std::string& nsight_py, const std::string& action) {
        const nsel::RayPatchReport report =
            nsel::patch_ray_nsight_file(nsight_py, parse_action(action));
        nb::dict out;
        out["file"] = report.file.string();
        out["ray_version"] = report.ray_version;
        out["status"] = std::string(nsel::to_string(report.outcome));
        out["line"] = report.line;
        out["message"] = nsel::describe(report);
        return out;
      },
      nb::arg("nsight_py"), nb::arg("action") = "apply");
}
