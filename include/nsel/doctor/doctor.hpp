// `nsel doctor`: whether this node can profile as asked, each problem with its fix.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/settings.hpp"

namespace nsel {

struct DoctorCheck {
  enum class Status { ok, warning, problem, skipped };
  std::string name;  // nsys, importer, generations, gpu, settings, capture, ray_nsight,
                     // ld_library_path, space
  Status status = Status::ok;
  std::string detail;  // what was found
  std::string fix;     // what to do (warnings and problems)
};

std::string_view to_string(DoctorCheck::Status status);

struct DoctorRequest {
  EnvLookup environment;
  std::string output_dir;  // where reports will go; empty: Ray's /tmp/ray, else the working folder
  std::string python = "python3";  // the interpreter Ray's workers use (to find Ray)
};

// Runs every check; none throws. Asks nsys for its version and the CUDA driver for devices (in a
// child process), and the Python interpreter where Ray is installed.
std::vector<DoctorCheck> run_doctor(const DoctorRequest& request);

// Ray's nsight.py, judged from its text: patched (the worker's interpreter is kept), unpatched
// (the launcher bug), or neither (the expected line is not there: Ray may have changed).
enum class RayNsightState { patched, unpatched, unknown };
RayNsightState ray_nsight_state(std::string_view nsight_py_text);

}  // namespace nsel
