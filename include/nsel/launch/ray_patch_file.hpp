// Ray's nsight launcher file on disk: finding it, and applying, checking or reverting the fix
// (the text edit itself is core's edit_ray_nsight_source).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "nsel/core/ray_patch.hpp"

namespace nsel {

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
