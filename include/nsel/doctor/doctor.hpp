// `nsel doctor`: whether this node can profile as asked, each problem with its fix.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/settings.hpp"

namespace nsel {

struct DoctorCheck {
  enum class Status { ok, warning, problem, skipped };
  std::string name;  // nsys, importer, generations, gpu, settings, capture, ray_nsight,
                     // ray_plugin, ld_library_path, space, pid_namespaces
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

// The ray_nsight check for Ray's nsight.py at `nsight_py` holding `text`: patched (ok),
// unpatched (a problem: the launcher bug) or neither (a warning: Ray may have changed), as
// `nsel ray patch --check` reads the same text.
DoctorCheck judge_ray_nsight(const std::filesystem::path& nsight_py, std::string_view text);

}  // namespace nsel
