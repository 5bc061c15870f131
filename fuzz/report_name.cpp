// Report file names: "<worker>_<start>:<stop>_<pid>.nsys-rep". Any file name parses or not
// without harm, a parsed one prints back to a name that parses the same, and a name nsel makes
// from a worker, a window and a pid reads back exactly.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "check.hpp"
#include "nsel/reports/layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (const auto parsed = nsel::parse_report_file_name(input)) {
    NSEL_FUZZ_CHECK(parsed->pid >= 0);
    if (parsed->window) {
      const std::string again =
          nsel::report_file_name(parsed->worker, *parsed->window, parsed->pid);
      const auto reparsed = nsel::parse_report_file_name(again);
      NSEL_FUZZ_CHECK(reparsed && reparsed->worker == parsed->worker &&
                      reparsed->window == parsed->window && reparsed->pid == parsed->pid);
    }
  }
  // Input as "<worker>\0<start> <stop> <pid>" drives the other direction.
  const size_t nul = input.find('\0');
  if (nul == std::string_view::npos || nul == 0) return 0;
  const std::string worker(input.substr(0, nul));
  if (worker.find('/') != std::string::npos) return 0;  // not a valid worker name
  long long numbers[3] = {0, 0, 0};
  const std::string rest(input.substr(nul + 1));
  if (std::sscanf(rest.c_str(), "%lld %lld %lld", &numbers[0], &numbers[1], &numbers[2]) != 3) {
    return 0;
  }
  if (numbers[0] < 1 || numbers[1] <= numbers[0] || numbers[2] < 0) return 0;
  const nsel::StepWindow window{numbers[0], numbers[1]};
  const std::string name = nsel::report_file_name(worker, window, numbers[2]);
  const auto back = nsel::parse_report_file_name(name);
  NSEL_FUZZ_CHECK(back.has_value());
  NSEL_FUZZ_CHECK(back->worker == worker);
  NSEL_FUZZ_CHECK(back->window == window);
  NSEL_FUZZ_CHECK(back->pid == numbers[2]);
  return 0;
}
