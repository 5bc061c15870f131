// The fix of Ray's nsight launcher (docs/ray.md): Ray's `_nsight` runtime-env plugin replaces the
// worker's interpreter with whatever `python` is on PATH; the fix keeps `context.py_executable`.
#pragma once

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

}  // namespace nsel
