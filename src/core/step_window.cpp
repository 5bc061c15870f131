#include "nsel/step_window.hpp"

#include <charconv>

#include "nsel/error.hpp"

namespace nsel {
namespace {

constexpr std::string_view kExpected =
    "'start:stop' with whole numbers 1 <= start < stop, for example '2:4' (steps 2 and 3)";

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

long long parse_number(std::string_view text, std::string_view what, std::string_view source,
                       std::string_view value) {
  const std::string_view digits = trim(text);
  if (digits.empty()) {
    throw Error(bad_value(source, value, std::string(what) + " is missing", kExpected));
  }
  long long number = 0;
  const char* first = digits.data();
  if (*first == '+') ++first;  // Python's int() accepts a leading '+'
  const char* last = digits.data() + digits.size();
  auto [end, ec] = std::from_chars(first, last, number);
  if (ec == std::errc::result_out_of_range) {
    throw Error(bad_value(source, value, std::string(what) + " " + quote(digits) + " is too large",
                          kExpected));
  }
  if (ec != std::errc() || end != last || first == last) {
    throw Error(bad_value(source, value,
                          std::string(what) + " " + quote(digits) + " is not a whole number",
                          kExpected));
  }
  return number;
}

}  // namespace

std::string StepWindow::text() const {
  return std::to_string(start) + ":" + std::to_string(stop);
}

StepWindow parse_step_window(std::string_view value, std::string_view source) {
  const size_t colon = value.find(':');
  if (colon == std::string_view::npos) {
    throw Error(bad_value(source, value, "missing ':' between start and stop", kExpected));
  }
  if (value.find(':', colon + 1) != std::string_view::npos) {
    throw Error(bad_value(source, value, "more than one ':'", kExpected));
  }
  StepWindow window;
  window.start = parse_number(value.substr(0, colon), "start", source, value);
  window.stop = parse_number(value.substr(colon + 1), "stop", source, value);
  if (window.start < 1) {
    throw Error(bad_value(source, value, "start must be >= 1 (steps are 1-based)", kExpected));
  }
  if (window.stop <= window.start) {
    throw Error(bad_value(source, value,
                          "empty range (stop must be greater than start; stop is exclusive)",
                          kExpected));
  }
  return window;
}

}  // namespace nsel
