// NRL_NSYS_PROFILE_STEP_RANGE: any text either parses to a valid window that prints back to
// itself, or gives a one-line error naming the variable.
#include <cstdint>
#include <string_view>

#include "check.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/step_window.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    const nsel::StepWindow window = nsel::parse_step_window(input);
    NSEL_FUZZ_CHECK(window.start >= 1);
    NSEL_FUZZ_CHECK(window.stop > window.start);
    NSEL_FUZZ_CHECK(nsel::parse_step_window(window.text()) == window);
    NSEL_FUZZ_CHECK(window.contains(window.start) && !window.contains(window.stop));
  } catch (const nsel::Error& e) {
    NSEL_FUZZ_CHECK(e.exit_code() == nsel::kUsageExitCode);
    NSEL_FUZZ_CHECK(nsel::fuzz::is_one_line_error(e.what(), "NRL_NSYS_PROFILE_STEP_RANGE="));
  }
  return 0;
}
