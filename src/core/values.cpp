#include "nsel/core/values.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "nsel/core/error.hpp"

namespace nsel {
namespace {

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    unsigned int low = 0x80;
    unsigned int high = 0xBF;
    if (byte < 0x80) {
      ++i;
      continue;
    } else if (byte >= 0xC2 && byte <= 0xDF) {
      length = 1;
    } else if (byte >= 0xE0 && byte <= 0xEF) {
      length = 2;
      if (byte == 0xE0) low = 0xA0;
      if (byte == 0xED) high = 0x9F;
    } else if (byte >= 0xF0 && byte <= 0xF4) {
      length = 3;
      if (byte == 0xF0) low = 0x90;
      if (byte == 0xF4) high = 0x8F;
    } else {
      return false;
    }
    if (i + length >= text.size()) return false;  // cut short
    for (size_t k = 1; k <= length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      const unsigned int min = k == 1 ? low : 0x80;
      const unsigned int max = k == 1 ? high : 0xBF;
      if (next < min || next > max) return false;
    }
    i += length + 1;
  }
  return true;
}

}  // namespace

std::chrono::milliseconds parse_seconds(std::string_view value, std::string_view source) {
  constexpr std::string_view kExpected =
      "a number of seconds greater than 0 and at most 86400, for example '60' or '2.5'";
  const std::string_view text = trim(value);
  // Whole seconds, then up to three decimals: plain digits only, so '1e3', '0x10', 'inf' and
  // '-1' are refused rather than half understood.
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  const auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (text.empty() || whole.empty() || !digits(whole) || !digits(fraction) ||
      (dot != std::string_view::npos && fraction.empty())) {
    throw Error(bad_value(source, value, "not a number of seconds", kExpected));
  }
  if (fraction.size() > 3) {
    throw Error(bad_value(source, value, "more precise than a millisecond", kExpected));
  }
  const std::string_view significant =
      whole.substr(std::min(whole.find_first_not_of('0'), whole.size()));
  if (significant.size() > 5) throw Error(bad_value(source, value, "too long", kExpected));
  long long milliseconds = 0;
  for (char c : whole) milliseconds = milliseconds * 10 + (c - '0');
  milliseconds *= 1000;
  long long scale = 100;
  for (char c : fraction) {
    milliseconds += (c - '0') * scale;
    scale /= 10;
  }
  if (milliseconds <= 0) throw Error(bad_value(source, value, "must be greater than 0", kExpected));
  if (milliseconds > 86400LL * 1000) throw Error(bad_value(source, value, "too long", kExpected));
  return std::chrono::milliseconds(milliseconds);
}

bool parse_switch(std::string_view value, std::string_view source) {
  std::string lower(trim(value));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "1" || lower == "true" || lower == "yes") return true;
  if (lower == "0" || lower == "false" || lower == "no") return false;
  throw Error(bad_value(source, value, "not a yes/no value", "'1' (yes) or '0' (no)"));
}

long long parse_whole_number(std::string_view value, std::string_view source, long long min,
                             long long max) {
  const std::string expected =
      "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  const std::string_view text = trim(value);
  long long number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || end != text.data() + text.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    throw Error(bad_value(source, value, "not a whole number", expected));
  }
  if (ec == std::errc::result_out_of_range || number < min || number > max) {
    throw Error(bad_value(source, value, "out of range", expected));
  }
  return number;
}

double parse_decimal(std::string_view value, std::string_view source, double min, double max,
                     std::string_view expected) {
  const std::string_view text = trim(value);
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || end != text.data() + text.size() || ec != std::errc() ||
      !std::isfinite(number)) {
    throw Error(bad_value(source, value, "not a number", expected));
  }
  if (number < min || number > max) throw Error(bad_value(source, value, "out of range", expected));
  return number;
}

std::string parse_worker_name(std::string_view value, std::string_view source) {
  constexpr std::string_view kExpected = "a worker name such as 'dtensor_policy_worker'";
  if (value.empty()) throw Error(bad_value(source, value, "empty", kExpected));
  if (!is_utf8(value)) {
    throw Error(
        bad_value(source, value, "not valid UTF-8 (names are text, as in Python)", kExpected));
  }
  if (value.find('/') != std::string_view::npos) {
    throw Error(
        bad_value(source, value, "holds '/', which a report file name cannot hold", kExpected));
  }
  return std::string(value);
}

std::string size_text(std::uintmax_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  }
  return text;
}

}  // namespace nsel
