// Worker names from the command line: accepted ones are the input unchanged and name a report
// that reads back to them; refused ones give a one-line error naming the flag.
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/values.hpp"
#include "nsel/reports/layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string worker;
  try {
    worker = nsel::parse_worker_name(input, "--worker");
  } catch (const nsel::Error& e) {
    NSEL_FUZZ_CHECK(nsel::fuzz::is_one_line_error(e.what(), "--worker="));
    return 0;
  }
  NSEL_FUZZ_CHECK(worker == input);
  const auto back =
      nsel::parse_report_file_name(nsel::report_file_name(worker, nsel::StepWindow{2, 4}, 4242));
  NSEL_FUZZ_CHECK(back && back->worker == worker && back->pid == 4242);
  return 0;
}
