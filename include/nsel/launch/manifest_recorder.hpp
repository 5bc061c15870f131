// Writing the manifest of one profiled process while `nsel exec` supervises nsys (always
// atomically: temporary name, then rename).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nsel/core/manifest.hpp"
#include "nsel/core/step_window.hpp"

namespace nsel {

struct WorkerPlan;

// The path nsys gives its report for the `-o` value `output` (with nsys's %p, %h, %q{VAR} and
// %% expanded for `pid`), the ".nsys-rep" suffix added when missing; relative to `working_dir`.
std::filesystem::path expand_report_path(std::string_view output, long long pid,
                                         const std::filesystem::path& working_dir);

// Keeps the manifest of one profiled process up to date while `nsel exec` supervises nsys.
// Construction writes the first manifest (state "running"); a background thread finds the
// profiled program among this process's descendants (nsys starts it through its launcher), and
// then writes the manifest under the report's own name. finish() records the end.
class ManifestRecorder {
 public:
  // `output` is nsys's -o value; `manifest` holds everything known before the start.
  ManifestRecorder(Manifest manifest, std::string output);
  // For a profiled worker's plan: its worker, pattern, window and command, this process's
  // description (host, node IP, rank variables, nsel's pid, start time) and the plan's -o value.
  explicit ManifestRecorder(const WorkerPlan& plan);
  ~ManifestRecorder();
  ManifestRecorder(const ManifestRecorder&) = delete;
  ManifestRecorder& operator=(const ManifestRecorder&) = delete;

  // After nsys exited with `exit_status`: end time, exit status, and the state of the report
  // found on disk. Never throws (a manifest must not change the worker's exit code).
  void finish(int exit_status) noexcept;

  // After finish(), for one nsys session that wrote one report per step window: one manifest
  // beside each window's report (its own window and path), in place of the session's own.
  void split_by_window(
      const std::vector<std::pair<StepWindow, std::filesystem::path>>& reports) noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nsel
