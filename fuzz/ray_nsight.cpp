// The Ray launcher fix rewrites a file of Ray's own: whatever its text, the edit keeps every
// other line as it was, leaves nothing to do when run again, and reverting leaves no fixed line.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "nsel/core/ray_patch.hpp"

namespace {

long lines_of(std::string_view text) {
  return std::count(text.begin(), text.end(), '\n');
}

void check_edit(std::string_view source, bool revert) {
  using nsel::RayNsightState;
  const nsel::RayNsightEdit edit = nsel::edit_ray_nsight_source(source, revert);
  NSEL_FUZZ_CHECK(lines_of(edit.text) == lines_of(source));
  NSEL_FUZZ_CHECK(edit.changed_lines >= 0 && edit.changed_lines <= lines_of(source) + 1);
  NSEL_FUZZ_CHECK((edit.changed_lines == 0) == (edit.text == source));
  NSEL_FUZZ_CHECK((edit.before == RayNsightState::not_found) == (edit.first_line == 0));
  if (!revert) {
    // Applying touches exactly the original lines: none when the file is fixed or unknown.
    NSEL_FUZZ_CHECK((edit.before == RayNsightState::unpatched) == (edit.changed_lines > 0));
  }
  const nsel::RayNsightEdit again = nsel::edit_ray_nsight_source(edit.text, revert);
  NSEL_FUZZ_CHECK(again.changed_lines == 0);
  NSEL_FUZZ_CHECK(again.text == edit.text);
  NSEL_FUZZ_CHECK(again.first_line == edit.first_line);
  if (edit.before != RayNsightState::not_found) {
    NSEL_FUZZ_CHECK(again.before == (revert ? RayNsightState::unpatched : RayNsightState::patched));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check_edit(input, false);
  check_edit(input, true);
  // Reverting what applying wrote gives an unpatched file again, which applying fixes again.
  const std::string applied = nsel::edit_ray_nsight_source(input).text;
  const std::string reverted = nsel::edit_ray_nsight_source(applied, true).text;
  const nsel::RayNsightEdit reapplied = nsel::edit_ray_nsight_source(reverted);
  NSEL_FUZZ_CHECK(lines_of(reapplied.text) == lines_of(input));
  NSEL_FUZZ_CHECK(nsel::edit_ray_nsight_source(reapplied.text).changed_lines == 0);
  return 0;
}
