// NRL_NSYS_WORKER_PATTERNS and the matcher: input = "<patterns>\n<worker name>".
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "nsel/core/pattern.hpp"

namespace {

// A pattern that matches exactly `name`: the three special characters in brackets.
std::string literal_pattern(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[') {
      out += '[';
      out += c;
      out += ']';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string_view list_text = input.substr(0, newline);
  const std::string_view name =
      newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);

  const nsel::PatternList list = nsel::PatternList::parse(list_text);
  for (const std::string& pattern : list.patterns()) {
    NSEL_FUZZ_CHECK(!pattern.empty());
    NSEL_FUZZ_CHECK(pattern.find(',') == std::string::npos);
    NSEL_FUZZ_CHECK(pattern.front() != ' ' && pattern.back() != ' ');
  }
  // The first match is the first pattern, in list order, that matches.
  const auto first = list.first_match(name);
  bool seen = false;
  for (const std::string& pattern : list.patterns()) {
    if (nsel::fnmatch_case(pattern, name)) {
      NSEL_FUZZ_CHECK(first && *first == pattern);
      seen = true;
      break;
    }
  }
  NSEL_FUZZ_CHECK(seen == first.has_value());

  NSEL_FUZZ_CHECK(nsel::fnmatch_case("*", name));
  NSEL_FUZZ_CHECK(nsel::fnmatch_case(literal_pattern(name), name));
  NSEL_FUZZ_CHECK(nsel::fnmatch_case("*" + literal_pattern(name), name));
  // Case-sensitive and anchored: one more character never matches.
  NSEL_FUZZ_CHECK(!nsel::fnmatch_case(literal_pattern(name), std::string(name) + "x"));
  // The list text itself used as a pattern against the name: no crash, no hang.
  (void)nsel::fnmatch_case(list_text, name);
  return 0;
}
