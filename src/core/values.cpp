#include "nsel/core/values.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "nsel/core/error.hpp"

namespace nsel {
namespace {

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_utf8(std::string_view text) {
  for (size_t i = 0, n = 0; i < text.size(); i += n) {
    n = utf8_character_length(text, i);
    if (n == 0) return false;
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
  if (value.find('\0') != std::string_view::npos) {
    throw Error(
        bad_value(source, value, "holds a NUL byte, which no command line can carry", kExpected));
  }
  if (value.find('/') != std::string_view::npos) {
    throw Error(
        bad_value(source, value, "holds '/', which a report file name cannot hold", kExpected));
  }
  return std::string(value);
}

std::string utc_time_text(std::chrono::system_clock::time_point when, bool with_milliseconds) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  if (!with_milliseconds) return std::string(text) + "Z";
  const long long millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() % 1000;
  char full[80];
  std::snprintf(full, sizeof full, "%s.%03lldZ", text, millis);
  return full;
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

std::size_t utf8_character_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;  // cut short
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(at + k) < 0x80 || byte(at + k) > 0xBF) return 0;
  }
  return length;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_character_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace nsel
