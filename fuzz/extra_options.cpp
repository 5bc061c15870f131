// NRL_NSYS_EXTRA_OPTIONS merged over the contract's defaults: a bad value changes nothing and
// gives a one-line error; a good one leaves one entry per option, the user's keys winning.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "check.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/nsys_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const nsel::NsysOptions defaults =
      nsel::NsysOptions::contract_defaults("dtensor_policy_worker", nsel::StepWindow{2, 4});
  nsel::NsysOptions options = defaults;
  try {
    options.merge_json(input);
  } catch (const nsel::Error& e) {
    NSEL_FUZZ_CHECK(options.entries() == defaults.entries());
    NSEL_FUZZ_CHECK(nsel::fuzz::is_one_line_error(e.what(), "NRL_NSYS_EXTRA_OPTIONS="));
    return 0;
  }
  std::set<std::string> names;
  for (const auto& [key, value] : options.entries()) {
    NSEL_FUZZ_CHECK(!key.empty() && key.front() != '-');
    NSEL_FUZZ_CHECK(names.insert(std::string(nsel::canonical_option_name(key))).second);
  }
  // The user's last word on each option is what nsys gets (JSON keeps the last duplicate).
  // nlohmann::json cannot read all that Python's json.loads does (NaN, 1e400): those objects
  // are checked against Python by the extra_options_agree_with_python test instead.
  const nlohmann::json parsed = nlohmann::json::parse(input, nullptr, false);
  if (parsed.is_discarded()) return 0;
  for (const auto& [key, value] : parsed.items()) {
    const auto got = options.get(key);
    if (value.is_null()) {
      NSEL_FUZZ_CHECK(!got);
    } else if (value.is_string()) {
      NSEL_FUZZ_CHECK(got && *got == value.get<std::string>());
    } else if (value.is_boolean()) {
      NSEL_FUZZ_CHECK(got && *got == (value.get<bool>() ? "true" : "false"));
    } else if (value.is_number_integer()) {
      NSEL_FUZZ_CHECK(got && *got == value.dump());
    } else {
      // A float, as Python prints it (not always as nlohmann does).
      NSEL_FUZZ_CHECK(got && !got->empty());
    }
  }
  // Every entry becomes arguments: "-k value" or "--key=value".
  size_t expected_arguments = 0;
  for (const auto& [key, value] : options.entries()) expected_arguments += key.size() == 1 ? 2 : 1;
  NSEL_FUZZ_CHECK(options.to_argv().size() == expected_arguments);
  return 0;
}
