// nsel._nsel: the C++ library for Python (Ray drivers, Ray's runtime-env agent, Python workers).
// The Python files of the package only re-export and glue; the logic stays in the library.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "nsel/core/command_line.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/launch_settings.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/rank_selection.hpp"
#include "nsel/core/ray_runtime_env.hpp"
#include "nsel/core/settings.hpp"
#include "nsel/launch/ray_agents.hpp"
#include "nsel/launch/ray_patch_file.hpp"
#include "nsel/nsel.h"
#include "nsel/step/step.hpp"
#include "nsel/sys/host.hpp"
#include "nsel/workflow/run_worker.hpp"

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
    nsel_range_push(name.c_str());
    return *this;
  }
  void exit() { nsel_range_pop(); }

 private:
  long long number_;
};

// A step controller of the caller's own over NRL_NSYS_PROFILE_STEP_RANGE-style windows, with the
// `none` backend: it captures nothing and tells which steps a loop would capture (the same state
// machine the process-wide controller runs).
class WindowRule {
 public:
  explicit WindowRule(std::string_view step_range)
      : controller_(nsel::parse_step_windows(step_range, "step_range"),
                    nsel::make_capture_backend(nsel::CaptureMode::none)) {}
  bool step(long long number) {
    controller_.on_step(number);
    return capturing();
  }
  bool capturing() const { return controller_.state() == nsel::StepController::State::capturing; }
  std::size_t captures() const { return controller_.captures(); }
  void finish() { controller_.finish(); }

 private:
  nsel::StepController controller_;
};

// Python's int alone: True is not rank 1 (bool is a subclass of int), and a float or a string is
// no whole number. Anything else is nsel.Error naming the argument, with its repr.
std::string whole_number_text(nb::handle value, std::string_view name, std::string_view expected) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) {
    throw nsel::Error(nsel::bad_value(
        name, nb::cast<std::string>(nb::repr(value)),
        std::string("a ") + Py_TYPE(value.ptr())->tp_name + ", not a whole number", expected));
  }
  return nb::cast<std::string>(nb::str(value));
}

// A rank argument (None: not given), by --rank's rule: a value past what a rank can be is "too
// large", never the binding's TypeError.
std::optional<long long> rank_argument(nb::handle value, std::string_view name) {
  if (value.is_none()) return std::nullopt;
  return nsel::parse_rank(whole_number_text(value, name, "a whole number >= 0, for example '3'"),
                          name);
}

// A step number: any whole number a long long holds.
long long step_number_argument(nb::handle value) {
  constexpr std::string_view kExpected =
      "a whole number from -9223372036854775808 to 9223372036854775807";
  const std::string text = whole_number_text(value, "number", kExpected);
  int overflow = 0;
  const long long number = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0) {
    throw nsel::Error(nsel::bad_value("number", text, "out of range", kExpected));
  }
  return number;
}

// A node name argument: not empty, and no NUL byte (no command line can carry one).
std::optional<std::string> node_argument(const std::optional<std::string>& node) {
  if (!node) return std::nullopt;
  constexpr std::string_view kExpected =
      "the actor's node name as NSEL_PROFILE_NODES patterns see it, for example 'node07'";
  if (node->empty())
    throw nsel::Error(nsel::bad_value("node", *node, "empty node name", kExpected));
  if (node->find('\0') != std::string::npos) {
    throw nsel::Error(nsel::bad_value("node", *node, "holds a NUL byte", kExpected));
  }
  return node;
}

// The rank, local rank and node a caller gives (None: not given), checked as nsel checks the
// flags of `nsel exec`, and named after the keyword arguments in messages. The plugin's
// validate() checks an actor's entry by the same rule (check_actor).
nsel::IdentityOverrides given_identity(nb::handle rank, nb::handle local_rank,
                                       const std::optional<std::string>& node) {
  nsel::IdentityOverrides given;
  given.rank_source = "the rank argument";
  given.local_rank_source = "the local_rank argument";
  given.node_source = "the node argument";
  given.rank = rank_argument(rank, "rank");
  given.local_rank = rank_argument(local_rank, "local_rank");
  given.node = node_argument(node);
  return given;
}

// What `nsel plan` decides for `worker` (preview_worker), from this process's environment. A driver
// planning an actor elsewhere (`actor`) knows only what it was given of the actor's identity: its
// own RANK, LOCAL_RANK and host name are not the actor's. The GPU is probed in this process (a
// driver or agent is multi-threaded, so no fork), unless `probe_node` is false. nsys, the GPU and
// each option set are asked once per process and PATH: a driver plans one actor after another.
nsel::WorkerLaunch preview_here(const std::string& worker, const std::string& output_dir,
                                bool probe_node, const nsel::IdentityOverrides& given,
                                nsel::ActorPlanning actor = nsel::ActorPlanning::none) {
  nsel::WorkerRequest request;
  request.worker = worker;
  request.output_dir = output_dir;
  request.environment = environment;
  request.actor = actor;
  request.decided_identity =
      actor == nsel::ActorPlanning::none
          ? nsel::identify_process(environment, given, nsel::host_name())
          : nsel::identify_process([](std::string_view) { return std::optional<std::string>(); },
                                   given, "");
  request.gpu_probing = probe_node ? nsel::GpuProbing::in_process : nsel::GpuProbing::skipped;
  static std::mutex mutex;
  static std::map<std::string, nsel::PlanningMemo> memo_by_path;
  const std::lock_guard lock(mutex);
  return nsel::preview_worker(request, memo_by_path[environment("PATH").value_or("")]);
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
  out["notice"] = plan.notice;
  out["log_line"] = plan.profile ? plan.log_line() : std::string();
  return out;
}

// plan_to_dict, with what nsel plan tells on stderr before its line: why a matched worker is
// left out, and the guidance for a selected one.
nb::dict launch_to_dict(const nsel::WorkerLaunch& launch) {
  nb::dict out = plan_to_dict(launch.plan);
  out["notices"] = launch.notices;
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
      [](nb::handle argument) {
        const long long number = step_number_argument(argument);
        {
          const nb::gil_scoped_release released;  // the step may wait for nsys
          nsel_step_begin(number);
        }
        return Step(number);
      },
      nb::arg("number"),
      "Begins step `number` (1-based): opens capture at the first step inside the window and "
      "closes "
      "it at the first step outside (NeMo RL's rule; a resumed job captures from its first step "
      "inside). Use it as `with nsel.step(n):` to also mark the step with the NVTX range 'step "
      "n'.");
  nb::class_<WindowRule>(
      m, "WindowRule",
      "The window rule on its own: WindowRule('3:7').step(4) is True when step 4 would be "
      "captured (it opens capture at the first step inside a window and closes it at the first "
      "step outside, as NeMo RL does). Captures nothing; for checking a loop's steps.")
      .def(nb::init<std::string_view>(), nb::arg("step_range"))
      .def(
          "step",
          [](WindowRule& rule, nb::handle number) {
            return rule.step(step_number_argument(number));
          },
          nb::arg("number"), "Begins step `number`; True when capture is then open.")
      .def_prop_ro("capturing", &WindowRule::capturing)
      .def_prop_ro("captures", &WindowRule::captures,
                   "Captures opened so far, empty ones included (reports nsys would write).")
      .def("finish", &WindowRule::finish, "Closes capture, as process exit does.");
  m.def(
      "init_worker",
      [](const std::string& worker, nb::handle rank, nb::handle local_rank,
         std::optional<std::string> node) {
        nsel::parse_worker_name(worker, "worker");
        return nsel::init_worker(worker, given_identity(rank, local_rank, node));
      },
      nb::arg("worker"), nb::arg("rank") = nb::none(), nb::arg("local_rank") = nb::none(),
      nb::arg("node") = nb::none(),
      "For a process not started by `nsel exec`: reads the selection variables and enables step "
      "control when `worker` is selected. `rank`, `local_rank` and `node` (an actor's, given by "
      "its driver) win over RANK, LOCAL_RANK, ... and the host name. 1 selected, 0 not, -1 "
      "invalid settings.");
  m.def("finish", &nsel_finish, nb::call_guard<nb::gil_scoped_release>(),
        "Closes an open capture window now (also done at exit).");
  m.def(
      "capturing", [] { return nsel_capturing() != 0; }, "True while the capture window is open.");
  m.def(
      "range_push", [](const std::string& name) { nsel_range_push(name.c_str()); }, nb::arg("name"),
      "Opens the NVTX range `name` on this thread (see nsel.range).");
  m.def("range_pop", &nsel_range_pop, "Closes this thread's innermost NVTX range.");

  m.def(
      "plan_dict",
      [](const std::string& worker, const std::string& output_dir, bool probe_node, nb::handle rank,
         nb::handle local_rank, std::optional<std::string> node) {
        return launch_to_dict(
            preview_here(worker, output_dir, probe_node, given_identity(rank, local_rank, node)));
      },
      nb::arg("worker"), nb::arg("output_dir") = "", nb::arg("probe_node") = true,
      nb::arg("rank") = nb::none(), nb::arg("local_rank") = nb::none(),
      nb::arg("node") = nb::none(),
      "What `nsel plan --json` says about `worker`, from this process's environment.");
  m.def(
      "nsight_options",
      [](const std::string& worker, nb::handle rank, nb::handle local_rank,
         std::optional<std::string> node) {
        const nsel::WorkerLaunch launch =
            preview_here(worker, "", true, given_identity(rank, local_rank, node),
                         nsel::ActorPlanning::nsight_field);
        return std::make_pair(launch_to_dict(launch), nsel::ray_nsight_options(launch.plan));
      },
      nb::arg("worker"), nb::arg("rank") = nb::none(), nb::arg("local_rank") = nb::none(),
      nb::arg("node") = nb::none());
  m.def(
      "plugin_plan",
      [](const std::string& worker, nb::handle rank, nb::handle local_rank,
         std::optional<std::string> node) {
        return launch_to_dict(preview_here(worker, "", false,
                                           given_identity(rank, local_rank, node),
                                           nsel::ActorPlanning::plugin));
      },
      nb::arg("worker"), nb::arg("rank") = nb::none(), nb::arg("local_rank") = nb::none(),
      nb::arg("node") = nb::none(),
      "The driver's part of the plugin's plan: what is not given is decided on the actor's node.");
  m.def(
      "plugin_executable",
      [](std::string_view nsel_binary, std::string_view worker, std::string_view output_dir,
         std::string_view py_executable, const std::vector<std::string>& variables, nb::handle rank,
         nb::handle local_rank, std::optional<std::string> node) {
        return nsel::ray_plugin_executable(nsel_binary, worker, output_dir, py_executable,
                                           variables, given_identity(rank, local_rank, node));
      },
      nb::arg("nsel_binary"), nb::arg("worker"), nb::arg("output_dir"), nb::arg("py_executable"),
      nb::arg("environment") = std::vector<std::string>(), nb::arg("rank") = nb::none(),
      nb::arg("local_rank") = nb::none(), nb::arg("node") = nb::none());
  m.def(
      "check_actor",
      [](const std::string& worker, nb::handle rank, nb::handle local_rank,
         std::optional<std::string> node) {
        nsel::parse_worker_name(worker, "worker");
        given_identity(rank, local_rank, node);
      },
      nb::arg("worker"), nb::arg("rank") = nb::none(), nb::arg("local_rank") = nb::none(),
      nb::arg("node") = nb::none(),
      "Raises nsel.Error where the driver's helpers would refuse an actor's worker name, rank, "
      "local rank or node: the plugin checks an entry by the same rule.");
  m.def(
      "plugin_preflight",
      [](const std::string& worker, const std::map<std::string, std::string>& variables,
         nb::handle rank, nb::handle local_rank, std::optional<std::string> node,
         const std::string& program) {
        nsel::WorkerRequest request;
        request.worker = worker;
        const nsel::IdentityOverrides given = given_identity(rank, local_rank, node);
        if (given.rank) request.identity.rank = std::to_string(*given.rank);
        if (given.local_rank) request.identity.local_rank = std::to_string(*given.local_rank);
        request.identity.node = given.node;
        request.program = {program};
        request.environment = [&variables](std::string_view name) -> std::optional<std::string> {
          const auto found = variables.find(std::string(name));
          if (found == variables.end()) return std::nullopt;
          return found->second;
        };
        // Ray's agent is multi-threaded; nsel exec probes the node.
        request.gpu_probing = nsel::GpuProbing::skipped;
        request.try_options = true;  // a value nsys refuses would cost Ray's retries later
        const nsel::WorkerLaunch launch = nsel::decide_worker(request);
        nb::dict out;
        out["profile"] = launch.profiled;
        out["notices"] = launch.notices;
        return out;
      },
      nb::arg("worker"), nb::arg("variables"), nb::arg("rank") = nb::none(),
      nb::arg("local_rank") = nb::none(), nb::arg("node") = nb::none(), nb::arg("program"),
      "What `nsel exec` will decide for the worker on this node, `variables` being the worker's "
      "environment; raises nsel.Error with nsel exec's line where it would fail (nsys missing, "
      "an option nsys refuses).");
  m.def(
      "check_settings",
      [] {
        // In Ray's workers and agents the settings come with each actor's runtime env and are
        // checked where they are used; a driver's are checked as soon as it imports nsel.
        if (nsel::started_by_raylet(environment)) return false;
        nsel::ProfileSettings::from_environment(environment);
        nsel::LaunchSettings::from_environment(environment);
        nsel::decide_at_import_fix(environment);  // a bad NSEL_RAY_PATCH
        return true;
      },
      "Raises nsel.Error on a malformed NRL_NSYS_* or NSEL_* value, as the CLI would; False "
      "(nothing checked) in a process Ray started.");
  m.def("at_import_fix", [] {
    const nsel::AtImportFix fix = nsel::decide_at_import_fix(environment);
    nb::dict out;
    out["apply"] = fix.apply;
    out["skipped_because"] = fix.skipped_because;
    return out;
  });
  m.def("nsel_plugin_setting", &nsel::nsel_plugin_setting);
  m.def(
      "check_plugin_loaded",
      [](const std::string& worker, const std::string& session_dir) {
        return nsel::check_plugin_loaded(worker, session_dir) == nsel::PluginLoadedAnswer::loaded
                   ? std::string("loaded")
                   : std::string("unknown");
      },
      nb::arg("worker"), nb::arg("session_dir"));
  m.def(
      "check_plugin_before_ray_init",
      [](const std::string& worker) { nsel::check_plugin_before_ray_init(worker, environment); },
      nb::arg("worker"));
  m.def("plugin_not_loaded_message", &nsel::plugin_not_loaded_message, nb::arg("worker"),
        nb::arg("where"));
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
