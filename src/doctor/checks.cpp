#include "nsel/doctor/doctor.hpp"

#include <sys/statvfs.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "nsel/core/error.hpp"
#include "nsel/core/launch_settings.hpp"
#include "nsel/core/nsys_version.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/ray_patch.hpp"
#include "nsel/core/ray_runtime_env.hpp"
#include "nsel/core/terminal_text.hpp"
#include "nsel/launch/nsys_check.hpp"
#include "nsel/launch/ray_agents.hpp"
#include "nsel/step/gpu_probe.hpp"
#include "nsel/sys/nsys_installs.hpp"
#include "nsel/sys/proc.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {
namespace {

namespace fs = std::filesystem;
using Status = DoctorCheck::Status;

constexpr const char* kMegatronWorker = "megatron_policy_worker";
constexpr unsigned long long kGiB = 1024ULL * 1024 * 1024;

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t colon = list.find(':', begin);
    if (colon == std::string::npos) colon = list.size();
    if (colon > begin) parts.push_back(list.substr(begin, colon - begin));
    begin = colon + 1;
  }
  return parts;
}

// A folder holding the CUDA runtime or math libraries (what libtransformer_engine.so needs).
bool holds_cuda_libraries(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("libcudart.so") || name.starts_with("libcublas.so")) return true;
  }
  return false;
}

void add_nsys_checks(const DoctorRequest& request, std::vector<DoctorCheck>& checks) {
  const NsysCheck nsys = check_nsys(request.environment("PATH").value_or(""));
  const std::string opt_out = " (or set NSEL_ALLOW_UNPROFILED=1 to run selected workers bare)";
  if (!nsys.path || nsys.version.empty()) {
    checks.push_back({"nsys", Status::problem, nsys.problem, nsys.fix + opt_out});
    checks.push_back({"importer", Status::skipped, "nsys is not usable", ""});
    return;
  }
  checks.push_back(
      {"nsys", Status::ok, "Nsight Systems " + nsys.version + " at " + *nsys.path, ""});
  const auto version = parse_nsys_version(nsys.version);
  if (version && nsys_behaviour(*version).one_pid_namespace_at_a_time) {
    // What matters in a container: another container of the machine may profile at once.
    const bool in_container =
        own_pid_namespace().value_or(kInitialPidNamespace) != kInitialPidNamespace;
    checks.push_back(
        {"pid_namespaces", in_container ? Status::warning : Status::ok,
         "Nsight Systems " + nsys.version +
             " runs the sessions of one PID namespace at a time: of two containers of this "
             "machine profiling at once, the second fails (\"Agent launcher failed\"), and nsel "
             "exec refuses it with one line" +
             (in_container ? "; this process runs in a container's PID namespace" : ""),
         in_container ? "use Nsight Systems 2023.4 or later in containers (NSEL_NSYS or PATH)"
                      : ""});
  }
  if (nsys.usable) {
    checks.push_back({"importer", Status::ok, "QdstrmImporter at " + nsys.importer, ""});
  } else {
    checks.push_back({"importer", Status::problem, nsys.problem, nsys.fix + opt_out});
  }
  // The other generations installed: nsel report and nsel recover pick one per file.
  try {
    checks.push_back(
        {"generations", Status::ok,
         describe_generations(installed_generations(request.environment("NSEL_NSYS"),
                                                    request.environment("PATH").value_or(""))),
         ""});
  } catch (const Error& e) {
    checks.push_back({"generations", Status::problem, e.what(),
                      "set NSEL_NSYS to " + std::string(kNselNsysForm) + ", or unset it"});
  }
}

void add_gpu_and_capture_checks(const DoctorRequest& request, std::vector<DoctorCheck>& checks) {
  const GpuProbe probe = probe_gpu_isolated();
  std::string driver = first_line(read_text("/proc/driver/nvidia/version"));
  if (!driver.empty()) driver = "; " + driver;
  if (probe.usable) {
    checks.push_back({"gpu", Status::ok, probe.detail + driver, ""});
  } else {
    checks.push_back({"gpu", Status::warning, probe.detail + driver,
                      "install the NVIDIA driver and make a GPU visible (CUDA_VISIBLE_DEVICES) to "
                      "trace CUDA; without one nsel captures the window with an NVTX range"});
  }

  ProfileSettings settings;
  try {
    settings = ProfileSettings::from_environment(request.environment);
    LaunchSettings::from_environment(request.environment);
  } catch (const Error& e) {
    checks.push_back({"settings", Status::problem, e.what(),
                      "correct the variable as the message says; every worker would refuse to "
                      "start"});
    return;
  }
  if (settings.enabled()) {
    std::string patterns;
    for (const std::string& pattern : settings.patterns->patterns()) {
      patterns += (patterns.empty() ? "" : ", ") + quote(pattern);
    }
    checks.push_back({"settings", Status::ok,
                      "patterns " + patterns + "; steps " + settings.window->text(), ""});
  } else {
    checks.push_back({"settings", Status::ok,
                      "profiling is off (NRL_NSYS_WORKER_PATTERNS and "
                      "NRL_NSYS_PROFILE_STEP_RANGE are not set)",
                      ""});
  }
  // The mode nsel exec would use here, as plan_worker settles it (a capture range set in
  // NRL_NSYS_EXTRA_OPTIONS wins).
  PlanRequest plan_request;
  plan_request.worker = "doctor";
  plan_request.node_capture = resolve_capture_mode(settings.capture, probe);
  ProfileSettings probe_settings = settings;
  probe_settings.patterns = PatternList::parse("*");
  if (!probe_settings.window) probe_settings.window = StepWindow{1, 2};
  const WorkerPlan plan = plan_worker(probe_settings, plan_request);
  std::string how;
  switch (plan.capture) {
    case CaptureMode::cuda:
      how = "cuda: the CUDA profiler API (nsys --capture-range=cudaProfilerApi)";
      break;
    case CaptureMode::nvtx:
      how = "nvtx: an NVTX range 'nsel_capture' (nsys --capture-range=nvtx)";
      break;
    default:
      how = "none: the whole process is recorded";
  }
  if (plan.capture == CaptureMode::cuda && !probe.usable) {
    checks.push_back({"capture", Status::problem, how + ", but no GPU is usable here",
                      "set NSEL_CAPTURE=nvtx (or auto) on nodes without a GPU"});
  } else {
    checks.push_back({"capture", Status::ok, how, ""});
  }
}

// Where the interpreter Ray's workers use finds Ray: its python and ray/__init__.py, or why not.
struct RayInstall {
  std::string python;  // empty: not found
  std::string origin;  // empty: Ray is not installed for it
  std::string why_not;
};

RayInstall find_ray_install(const DoctorRequest& request) {
  RayInstall found;
  try {
    found.python =
        resolve_program(request.python, request.environment("PATH").value_or(""), "python");
  } catch (const Error&) {
    found.why_not = quote(request.python) + " not found";
    return found;
  }
  // find_spec locates the package without importing it (fast, and no side effects).
  const CapturedRun run = run_capturing(
      {found.python, "-c",
       "import importlib.util as u; s = u.find_spec('ray'); print(s.origin if s else '')"},
      std::chrono::seconds(30));
  const std::string origin = first_line(run.output);
  if (run.exit_code != 0 || origin.empty() || origin.front() != '/') {
    found.why_not = "Ray is not installed for " + found.python;
  } else {
    found.origin = origin;
  }
  return found;
}

void add_ray_check(const RayInstall& ray, std::vector<DoctorCheck>& checks) {
  if (ray.origin.empty()) {
    checks.push_back({"ray_nsight", Status::skipped, ray.why_not, ""});
    return;
  }
  const std::string& origin = ray.origin;
  const fs::path nsight = fs::path(origin).parent_path() / "_private" / "runtime_env" / "nsight.py";
  const std::string text = read_text(nsight);
  if (text.empty()) {
    checks.push_back({"ray_nsight", Status::warning, quote(nsight.string()) + " is missing",
                      "Ray's nsight plugin has moved; nsel exec as the worker's launcher still "
                      "works"});
    return;
  }
  checks.push_back(judge_ray_nsight(nsight, text));
}

// Whether nsel's runtime-env plugin will work: Ray's agent loads it only when
// RAY_RUNTIME_ENV_PLUGINS names it where the cluster starts, and must be able to import it.
void add_ray_plugin_check(const DoctorRequest& request, const RayInstall& ray,
                          std::vector<DoctorCheck>& checks) {
  const std::string name = "ray_plugin";
  const std::optional<std::string> value = request.environment(kRayPluginsVariable);
  const std::string variable(kRayPluginsVariable);
  const std::string fix_setting = "export " + variable + "='" + nsel_plugin_setting() +
                                  "' where the cluster starts (before 'ray start', or in the "
                                  "driver before ray.init())";
  std::string agents_text;
  std::vector<std::string> without_plugin;
  for (const RayRuntimeEnvAgent& agent : find_ray_runtime_env_agents()) {
    const std::string which =
        "pid " + std::to_string(agent.pid) + " (" + agent.session_dir.filename().string() + ")";
    if (!agent.environment_readable) {
      agents_text += "; agent " + which + ": its environment is not readable here";
    } else if (agent.setting == PluginSetting::loads_nsel) {
      agents_text += "; agent " + which + " loads nsel's plugin";
    } else {
      agents_text += "; agent " + which + " does not load it";
      without_plugin.push_back(which);
    }
  }
  const PluginSetting setting = read_plugin_setting(value);
  if (ray.origin.empty() && agents_text.empty()) {
    checks.push_back({name, Status::skipped, ray.why_not, ""});
    return;
  }
  if (setting == PluginSetting::malformed) {
    checks.push_back({name, Status::problem,
                      variable + " is " + quote(value.value_or("")) +
                          ", not a JSON list of {\"class\": ...} objects: Ray's runtime-env "
                          "agent fails to start" +
                          agents_text,
                      fix_setting});
    return;
  }
  if (setting != PluginSetting::loads_nsel) {
    checks.push_back(
        {name, Status::warning,
         variable +
             (setting == PluginSetting::unset ? " is not set" : " does not name nsel's plugin") +
             ": a cluster started from here ignores nsel.plugin_runtime_env's "
             "field (nsel raises nsel.Error at once rather than run unprofiled)" +
             agents_text,
         fix_setting + "; or use Ray's own field (nsel.nsight_runtime_env)"});
    return;
  }
  if (ray.origin.empty()) {
    checks.push_back({name, Status::problem,
                      variable + " names nsel's plugin, but " + ray.why_not + agents_text,
                      "install nsel's package with Ray ('pip install <nsel wheel> "
                      "\"ray[default]\"') for the python Ray's workers use"});
    return;
  }
  const std::string& python = ray.python;
  // As Ray's agent imports it; NSEL_RAY_PATCH=0 so that asking never rewrites Ray's files.
  const CapturedRun run =
      run_capturing({python, "-c",
                     "import os; os.environ['NSEL_RAY_PATCH'] = '0'; import nsel.ray_plugin as p; "
                     "print(p.__file__)"},
                    std::chrono::seconds(60));
  if (run.exit_code != 0) {
    checks.push_back(
        {name, Status::problem,
         python + " cannot import nsel.ray_plugin (" +
             (run.timed_out ? std::string("timed out") : last_output_line(run.output)) +
             "): Ray's agent will fail to load the plugin" + agents_text,
         "install nsel's package with Ray ('pip install <nsel wheel> "
         "\"ray[default]\"') in the environment Ray's agent runs"});
    return;
  }
  if (!without_plugin.empty()) {
    checks.push_back({name, Status::warning,
                      variable +
                          " names nsel's plugin here, but a running cluster's agent "
                          "started without it" +
                          agents_text,
                      "restart that cluster with " + variable + " set (" + fix_setting + ")"});
    return;
  }
  checks.push_back({name, Status::ok,
                    variable + " names nsel's plugin and " + python + " imports it from " +
                        last_output_line(run.output) + agents_text,
                    ""});
}

void add_library_path_check(const DoctorRequest& request, std::vector<DoctorCheck>& checks) {
  const std::string name = "ld_library_path";
  std::optional<PatternList> patterns;
  try {
    if (auto text = request.environment(kWorkerPatternsVariable); text && !text->empty()) {
      patterns = PatternList::parse(*text);
    }
  } catch (const Error&) {
  }
  if (patterns && !patterns->first_match(kMegatronWorker)) {
    checks.push_back({name, Status::ok,
                      "not needed: the patterns do not select " + std::string(kMegatronWorker),
                      ""});
    return;
  }
  const std::string value = request.environment("LD_LIBRARY_PATH").value_or("");
  for (const std::string& dir : split_path_list(value)) {
    if (holds_cuda_libraries(dir)) {
      checks.push_back({name, Status::ok, "LD_LIBRARY_PATH holds CUDA libraries: " + dir, ""});
      return;
    }
  }
  std::vector<std::string> found;
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
                          "/usr/lib/x86_64-linux-gnu"}) {
    if (holds_cuda_libraries(dir)) found.push_back(dir);
  }
  if (found.empty()) {
    checks.push_back({name, Status::ok,
                      "no CUDA library folder on this node, nothing for Megatron to miss", ""});
    return;
  }
  checks.push_back({name, Status::warning,
                    "LD_LIBRARY_PATH holds no CUDA library folder: Megatron workers under nsys "
                    "fail to load libtransformer_engine.so",
                    "export LD_LIBRARY_PATH=" + found.front() +
                        "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} before starting the job"});
}

void add_space_check(const DoctorRequest& request, std::vector<DoctorCheck>& checks) {
  fs::path dir = request.output_dir;
  std::error_code ec;
  if (dir.empty()) dir = fs::exists("/tmp/ray", ec) ? fs::path("/tmp/ray") : fs::current_path(ec);
  dir = fs::absolute(dir, ec);
  // Reports will go into the folder once created: ask the nearest folder that exists.
  fs::path existing = dir;
  while (!existing.empty() && !fs::exists(existing, ec)) existing = existing.parent_path();
  struct statvfs info {};
  if (existing.empty() || statvfs(existing.c_str(), &info) != 0) {
    checks.push_back({"space", Status::problem, "cannot read free space for " + quote(dir.string()),
                      "choose an output folder on a mounted, readable file system"});
    return;
  }
  const unsigned long long free_bytes =
      static_cast<unsigned long long>(info.f_bavail) * info.f_frsize;
  char text[64];
  std::snprintf(text, sizeof text, "%.1f GiB free", static_cast<double>(free_bytes) / kGiB);
  const std::string detail = std::string(text) + " for " + dir.string();
  if (free_bytes < kGiB) {
    checks.push_back({"space", Status::problem, detail,
                      "free space or choose another output folder (a report of a GPU window "
                      "often takes hundreds of MiB, its .qdstrm as much again while it is made)"});
  } else if (free_bytes < 10 * kGiB) {
    checks.push_back({"space", Status::warning, detail,
                      "keep at least 10 GiB free for several workers' reports"});
  } else {
    checks.push_back({"space", Status::ok, detail, ""});
  }
}

}  // namespace

std::string_view to_string(DoctorCheck::Status status) {
  switch (status) {
    case Status::ok:
      return "ok";
    case Status::warning:
      return "warning";
    case Status::problem:
      return "problem";
    case Status::skipped:
      return "skipped";
  }
  return "ok";
}

DoctorCheck judge_ray_nsight(const fs::path& nsight_py, std::string_view text) {
  // The recogniser of `nsel ray patch`, so that both always agree on the same file.
  switch (edit_ray_nsight_source(text).before) {
    case RayNsightState::patched:
      return {"ray_nsight", Status::ok,
              "patched: " + nsight_py.string() + " keeps the worker's interpreter", ""};
    case RayNsightState::unpatched:
      return {"ray_nsight", Status::problem,
              "not patched: " + nsight_py.string() +
                  " replaces the worker's interpreter with 'python' (virtualenvs, uv and conda "
                  "workers run the wrong Python)",
              "run 'nsel ray patch' before Ray starts: the line must end in "
              "f\" {context.py_executable}\" instead of \" python\" (see README, \"Ray's "
              "launcher fix\")"};
    case RayNsightState::not_found:
      break;
  }
  return {"ray_nsight", Status::warning,
          "expected line not found in " + nsight_py.string() + " (Ray version may have changed)",
          "check by hand that the plugin keeps context.py_executable"};
}

std::vector<DoctorCheck> run_doctor(const DoctorRequest& request) {
  std::vector<DoctorCheck> checks;
  add_nsys_checks(request, checks);
  add_gpu_and_capture_checks(request, checks);
  const RayInstall ray = find_ray_install(request);
  add_ray_check(ray, checks);
  add_ray_plugin_check(request, ray, checks);
  add_library_path_check(request, checks);
  add_space_check(request, checks);
  return checks;
}

}  // namespace nsel
