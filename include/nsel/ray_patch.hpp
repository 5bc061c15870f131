// The fix of Ray's nsight launcher (DESIGN.md): Ray's `_nsight` runtime-env plugin replaces the
// worker's interpreter with whatever `python` is on PATH; the fix keeps `context.py_executable`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace nsel {

// What the text of ray/_private/runtime_env/nsight.py holds.
enum class RayNsightState {
  unpatched,  // at least one `... " ".join(self.nsight_cmd) + " python"` line
  patched,    // only the fixed form `... + f" {context.py_executable}"`
  not_found,  // neither: Ray's code has changed
};

struct RayNsightEdit {
  RayNsightState before = RayNsightState::not_found;
  std::string text;       // the new text; equal to the input when nothing changed
  int changed_lines = 0;  // lines rewritten
  int first_line = 0;     // 1-based line of the first matching line, 0 when none
};

// Pure (no files): finds the launcher line in either form, for the current Ray release
// (`self.nsight_cmd`) and older builds (`self.nsys_cmd`), whatever the spacing, quotes or a
// trailing comment. `revert` rewrites fixed lines back to Ray's original form.
RayNsightEdit edit_ray_nsight_source(std::string_view source, bool revert = false);

// The version in the text of ray/_version.py (`version = "2.60.0"`); nullopt when absent.
std::optional<std::string> ray_version_from_source(std::string_view version_py);

// --- Files ---

enum class RayPatchAction { apply, check, revert };

enum class RayPatchOutcome {
  patched,                  // apply: the file was rewritten
  already_patched,          // apply or check: nothing to do
  reverted,                 // revert: the file was rewritten back
  not_patched,              // check: the fix is missing; revert: nothing to revert
  expected_line_not_found,  // the launcher line is in neither form
  not_writable,             // the file or its folder cannot be written
};

struct RayPatchReport {
  std::filesystem::path file;
  std::string ray_version;  // "unknown" when ray/_version.py cannot be read
  RayPatchOutcome outcome = RayPatchOutcome::expected_line_not_found;
  int line = 0;        // 1-based line of the launcher line, 0 when not found
  std::string detail;  // the system's reason when not writable
};

// <site_packages>/ray/_private/runtime_env/nsight.py
std::filesystem::path ray_nsight_file(const std::filesystem::path& site_packages);

// Reads, edits and (for apply and revert) rewrites `nsight_py` atomically: a temporary file in
// the same folder, with the same mode, renamed over it; nothing is written when nothing
// changes. The Ray version is read from ../../_version.py. Throws nsel::Error (exit code 1) when
// the file cannot be read.
RayPatchReport patch_ray_nsight_file(const std::filesystem::path& nsight_py, RayPatchAction action);

// "patched", "already patched", "reverted", "not patched", "expected line not found",
// "not writable".
std::string_view to_string(RayPatchOutcome outcome);

// One line for people, e.g. "patched: /x/ray/_private/runtime_env/nsight.py (Ray 2.60.0, line 132):
// workers under nsys keep their own interpreter".
std::string describe(const RayPatchReport& report);

// The site-packages folder holding the `ray` package that `python` imports (found without
// importing Ray). Runs `python` as a child process (argv, no shell). Throws nsel::Error naming
// `source` when `python` cannot run or has no Ray.
std::filesystem::path find_ray_site_packages(const std::string& python,
                                             std::string_view source = "--python");

}  // namespace nsel
