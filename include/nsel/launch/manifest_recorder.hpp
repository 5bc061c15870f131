// Writing the manifest of one profiled process while `nsel exec` supervises nsys (always
// atomically: temporary name, then rename).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
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

// The longest file name nsel and nsys create in the report's folder for `plan` (its reports,
// nsys's hidden and numbered names, manifests and their temporary names, `nsel recover`'s work
// files), with the largest process id Linux gives: checked against the folder's NAME_MAX before
// the program starts.
std::string longest_file_name(const WorkerPlan& plan);

// Keeps the manifest of one profiled process up to date while `nsel exec` supervises nsys.
// Construction writes the first manifest (state "running") under a hidden pending name; a
// background thread finds the profiled program among this process's descendants (nsys starts it
// through its launcher), then claims the report's name by moving the pending manifest onto that
// name's manifest in one rename that never replaces (a taken name, by the same process id from
// another PID namespace or an old run, is passed over for "<stem>-<k>"). finish() records the
// end, after giving nsys's report its claimed name.
class ManifestRecorder {
 public:
  // `output` is nsys's -o value; `manifest` holds everything known before the start;
  // `report_output`, when set, is the -o form of the name the report gets once nsys has ended
  // (nsys writes `output`). The program is looked for below `nsys` (the process nsel started as
  // nsys, whatever it runs: a site's wrapper script of nsys is never the program), else below
  // this process.
  ManifestRecorder(Manifest manifest, std::string output,
                   std::optional<std::string> report_output = std::nullopt, pid_t nsys = 0);
  // For a profiled worker's plan: its worker, pattern, window and command, this process's
  // description (host, node IP, rank variables, nsel's pid, start time), the plan's -o value,
  // WorkerPlan::report_output, and the report's estimated size (to tell a full disk).
  explicit ManifestRecorder(const WorkerPlan& plan, pid_t nsys = 0);
  ~ManifestRecorder();
  ManifestRecorder(const ManifestRecorder&) = delete;
  ManifestRecorder& operator=(const ManifestRecorder&) = delete;

  // After nsys exited with `exit_status` (`stop_timed_out`: NSEL_STOP_TIMEOUT expired): the
  // report moved to its claimed name, then end time, exit status, and the state of the report
  // found on disk with its cause (kManifestStates; where nsys left its .qdstrm, when it could not
  // import it). Returns the state. Never throws (a manifest must not change the worker's exit
  // code by an exception).
  std::string finish(int exit_status, bool stop_timed_out = false) noexcept;

  // The step record (kStepRecordVariable) the program's step control appends to: read by
  // finish() when nsys wrote nothing (a capture opened: kManifestNsysFailed, naming
  // `nsys_version` when not empty), then removed.
  void read_step_record(std::filesystem::path record, std::string nsys_version);

  // For an nsys that ended before the program began (and is started again): stops looking for
  // the program and removes the pending manifest. False, with nothing changed on disk, when the
  // program's process id was already known (its manifest has claimed a report's name).
  bool abandon_unstarted() noexcept;
  // The manifest as last written, and where.
  const Manifest& manifest() const;
  std::filesystem::path path() const;

  // After finish(), for one nsys session that wrote one report per step window: one manifest
  // beside each window's report (its own window and path), in place of the session's own.
  void split_by_window(
      const std::vector<std::pair<StepWindow, std::filesystem::path>>& reports) noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nsel
