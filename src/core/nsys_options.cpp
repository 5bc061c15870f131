#include "nsel/core/nsys_options.hpp"

#include <locale.h>  // newlocale, strtod_l

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "core/output_name.hpp"
#include "nsel/core/error.hpp"

namespace nsel {
namespace {

constexpr std::string_view kExpectedObject =
    "a JSON object of nsys options, for example "
    "'{\"t\": \"cuda,nvtx,osrt\", \"cuda-memory-usage\": true}'";

// nsys profile's one-letter switches and their long names (nsys profile --help, 2022.4+).
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"b", "backtrace"},
    {"c", "capture-range"},
    {"d", "duration"},
    {"e", "env-var"},
    {"f", "force-overwrite"},
    {"i", "sampling-period"},
    {"n", "inherit-environment"},
    {"o", "output"},
    {"p", "nvtx-capture"},
    {"s", "sample"},
    {"t", "trace"},
    {"w", "show-output"},
    {"x", "stop-on-exit"},
    {"y", "delay"},
};

// Python's repr() of a double (what str() of a float gives, so what Ray writes into nsys's
// command): the shortest digits that read back, fixed notation for decimal exponents -4..15,
// "1e+16" style otherwise, always with a '.' or an exponent; nan, inf, -inf.
std::string python_float_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  // Shortest round-trip digits, nearest to the value: the same digits Python picks.
  const auto written =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const std::string_view text(buffer, static_cast<size_t>(written.ptr - buffer));
  const bool negative = text.front() == '-';
  const size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(negative ? 1 : 0, e - (negative ? 1 : 0))) {
    if (c != '.') digits += c;
  }
  int exponent = 0;
  std::from_chars(text.data() + e + (text[e + 1] == '+' ? 2 : 1), text.data() + text.size(),
                  exponent);
  const int point = exponent + 1;  // digits d1 d2 ... stand for 0.d1d2... * 10^point
  std::string out = negative ? "-" : "";
  if (point <= -4 || point > 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int shown = point - 1;
    out += shown < 0 ? "e-" : "e+";
    const std::string magnitude = std::to_string(shown < 0 ? -shown : shown);
    if (magnitude.size() < 2) out += '0';
    return out + magnitude;
  }
  if (point <= 0) return out + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  if (static_cast<size_t>(point) >= digits.size()) {
    return out + digits + std::string(static_cast<size_t>(point) - digits.size(), '0') + ".0";
  }
  return out + digits.substr(0, static_cast<size_t>(point)) + "." +
         digits.substr(static_cast<size_t>(point));
}

// Python 3.11's json.loads refuses integers of more digits than this (sys.int_info).
constexpr size_t kPythonIntDigitLimit = 4300;

// The length of the JSON number at the start of `text` (json.loads's own pattern,
// -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?), or 0; `integer` says it has no fraction or exponent.
size_t json_number_length(std::string_view text, bool& integer) {
  size_t i = 0;
  const auto digit = [&](size_t k) { return k < text.size() && text[k] >= '0' && text[k] <= '9'; };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digit(i)) return 0;
  if (text[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  integer = true;
  if (i + 1 < text.size() && text[i] == '.' && digit(i + 1)) {
    integer = false;
    i += 2;
    while (digit(i)) ++i;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t k = i + 1;
    if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
    if (digit(k)) {
      integer = false;
      i = k;
      while (digit(i)) ++i;
    }
  }
  return i;
}

// NRL_NSYS_EXTRA_OPTIONS as Python's json.loads reads it, so that each value reaches nsys as
// NeMo RL's command has it (str() of the value): NaN, Infinity and -Infinity are accepted (nan,
// inf, -inf), integers keep every digit (past 64 bits too), 1e400 is inf, and floats print as
// Python prints them. nlohmann::json does none of this, so every number in a value position is
// turned into the string of its Python text before nlohmann reads the object; a string and a
// number give an option the same text. `origin` maps a byte of the result back to `json_text`.
struct PythonNumbers {
  std::string text;
  std::vector<std::pair<size_t, long long>> shifts;  // (end in text, bytes added so far)
  std::string problem;

  size_t origin(size_t byte) const {
    long long shift = 0;
    for (const auto& [end, added] : shifts) {
      if (end <= byte) shift = added;
    }
    return static_cast<size_t>(static_cast<long long>(byte) - shift);
  }
};

PythonNumbers python_numbers(std::string_view json_text) {
  PythonNumbers out;
  std::vector<char> open;   // '{' or '[' for each container the scan is inside
  bool value_next = false;  // the next token sits where a value goes (not a key, not the top)
  long long added = 0;
  size_t i = 0;
  while (i < json_text.size()) {
    const char c = json_text[i];
    if (c == '"') {
      const size_t begin = i++;
      while (i < json_text.size() && json_text[i] != '"') i += json_text[i] == '\\' ? 2 : 1;
      i = std::min(i + 1, json_text.size());
      out.text.append(json_text.substr(begin, i - begin));
      value_next = false;
      continue;
    }
    if (c == '{' || c == '[') {
      open.push_back(c);
      value_next = c == '[';
    } else if (c == '}' || c == ']') {
      if (!open.empty()) open.pop_back();
      value_next = false;
    } else if (c == ':') {
      value_next = true;
    } else if (c == ',') {
      value_next = !open.empty() && open.back() == '[';
    }
    if (!value_next || !(c == '-' || c == 'N' || c == 'I' || (c >= '0' && c <= '9'))) {
      out.text += c;
      ++i;
      continue;
    }
    const std::string_view rest = json_text.substr(i);
    std::string python;
    size_t length = 0;
    bool integer = false;
    for (std::string_view word : {"NaN", "Infinity", "-Infinity"}) {
      if (rest.starts_with(word)) {
        length = word.size();
        python = word == "NaN" ? "nan" : word == "Infinity" ? "inf" : "-inf";
      }
    }
    if (length == 0) length = json_number_length(rest, integer);
    if (length == 0) {
      out.text += c;
      ++i;
      continue;
    }
    const std::string_view token = rest.substr(0, length);
    if (!python.empty()) {
      // NaN, Infinity or -Infinity: done.
    } else if (integer) {
      const bool negative = token.front() == '-';
      const std::string_view digits = token.substr(negative ? 1 : 0);
      if (digits.size() > kPythonIntDigitLimit) {
        out.problem = "an integer of " + std::to_string(digits.size()) +
                      " digits (Python's json.loads, which NeMo RL uses, refuses more than " +
                      std::to_string(kPythonIntDigitLimit) + ")";
        return out;
      }
      python = (negative && digits != "0" ? "-" : "") + std::string(digits);
    } else {
      // glibc's strtod rounds correctly, as Python's float() does; past a double's range it
      // gives inf and below it 0 or a subnormal, as Python does. The C locale keeps '.' the
      // decimal point whatever the process's locale is.
      static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", locale_t{});
      python = python_float_text(strtod_l(std::string(token).c_str(), nullptr, c_locale));
    }
    const std::string quoted = "\"" + python + "\"";
    out.text += quoted;
    added += static_cast<long long>(quoted.size()) - static_cast<long long>(length);
    out.shifts.emplace_back(out.text.size(), added);
    i += length;
    value_next = false;
  }
  return out;
}

bool valid_key(std::string_view key) {
  if (key.empty() || key.front() == '-') return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

}  // namespace

std::string_view canonical_option_name(std::string_view key) {
  for (auto [short_name, long_name] : kAliases) {
    if (key == short_name) return long_name;
  }
  return key;
}

std::string escape_output_name(std::string_view name) {
  std::string escaped;
  for (char c : name) {
    escaped += c;
    if (c == '%') escaped += '%';
  }
  return escaped;
}

NsysOptions NsysOptions::contract_defaults(std::string_view worker, const StepWindow& window) {
  // A literal '%' in a worker name must survive nsys's expansion.
  const std::string escaped_worker = escape_output_name(worker);
  NsysOptions options;
  options.entries_ = {
      {"t", "cuda,nvtx"},
      {"s", "none"},
      {"o", escaped_worker + "_" + window.text() + "_%p"},
      {"stop-on-exit", "true"},
      {"capture-range", "cudaProfilerApi"},
      {"capture-range-end", "stop"},
      {"cuda-graph-trace", "node"},
  };
  return options;
}

std::vector<NsysOptions::Entry>::iterator NsysOptions::find(std::string_view key) {
  const std::string_view wanted = canonical_option_name(key);
  return std::find_if(entries_.begin(), entries_.end(), [&](const Entry& entry) {
    return canonical_option_name(entry.first) == wanted;
  });
}

std::vector<NsysOptions::Entry>::const_iterator NsysOptions::find(std::string_view key) const {
  return const_cast<NsysOptions*>(this)->find(key);
}

void NsysOptions::set(std::string_view key, std::string value) {
  auto it = find(key);
  if (it != entries_.end()) {
    *it = {std::string(key), std::move(value)};
  } else {
    entries_.emplace_back(std::string(key), std::move(value));
  }
}

bool NsysOptions::erase(std::string_view key) {
  auto it = find(key);
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

std::optional<std::string> NsysOptions::get(std::string_view key) const {
  auto it = find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void NsysOptions::merge_json(std::string_view json_text, std::string_view source) {
  // nlohmann-json skips a leading byte-order mark; Python's json.loads refuses it.
  if (json_text.starts_with("\xEF\xBB\xBF")) {
    throw Error(bad_value(source, json_text,
                          "not valid JSON: it starts with a UTF-8 byte-order mark (Python's "
                          "json.loads, which NeMo RL uses, refuses it)",
                          kExpectedObject));
  }
  const PythonNumbers numbers = python_numbers(json_text);
  if (!numbers.problem.empty()) {
    throw Error(
        bad_value(source, json_text, "not valid JSON: " + numbers.problem, kExpectedObject));
  }
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(numbers.text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(bad_value(source, json_text,
                          "not valid JSON (at byte " + std::to_string(numbers.origin(e.byte)) + ")",
                          kExpectedObject));
  } catch (const nlohmann::json::exception&) {
    // Found by fuzzing: a number beyond a double (1e999, left as it is only at the top, where it
    // is no object anyway) is not a parse_error.
    throw Error(
        bad_value(source, json_text, "not valid JSON (a number out of range)", kExpectedObject));
  }
  if (!parsed.is_object()) {
    throw Error(bad_value(source, json_text,
                          std::string("a JSON ") + parsed.type_name() + " is not an object",
                          kExpectedObject));
  }
  // Validate everything before changing anything, so a bad entry leaves the set as it was.
  std::vector<std::pair<std::string, std::optional<std::string>>> updates;
  std::map<std::string, std::string> spelled_as;  // canonical name -> the key used
  for (const auto& [key, value] : parsed.items()) {
    // JSON objects have no order here, so two spellings of one option ("t" and "trace") would
    // be resolved by the alphabet, not by the user: refuse them.
    const auto [other, fresh] = spelled_as.emplace(std::string(canonical_option_name(key)), key);
    if (!fresh) {
      throw Error(bad_value(
          source, json_text,
          "keys " + quote(other->second) + " and " + quote(key) + " name the same nsys option",
          kExpectedObject));
    }
    if (!valid_key(key)) {
      throw Error(bad_value(source, json_text,
                            "key " + quote(key) +
                                " is not an nsys option name (letters, digits, "
                                "'-' and '_', without leading dashes)",
                            kExpectedObject));
    }
    if (value.is_null()) {
      updates.emplace_back(key, std::nullopt);
    } else if (value.is_string()) {
      updates.emplace_back(key, value.get<std::string>());
    } else if (value.is_boolean()) {
      updates.emplace_back(key, value.get<bool>() ? "true" : "false");
    } else if (value.is_number()) {
      updates.emplace_back(key, value.dump());
    } else {
      throw Error(bad_value(source, json_text,
                            "value of " + quote(key) + " is a JSON " + value.type_name() +
                                "; option values must be strings, numbers, booleans or null "
                                "(null removes a default)",
                            kExpectedObject));
    }
  }
  for (auto& [key, value] : updates) {
    if (value) {
      set(key, std::move(*value));
    } else {
      erase(key);
    }
  }
}

std::vector<std::string> NsysOptions::to_argv() const {
  std::vector<std::string> argv;
  for (const auto& [key, value] : entries_) {
    if (key.size() == 1) {
      argv.push_back("-" + key);
      argv.push_back(value);
    } else {
      argv.push_back("--" + key + "=" + value);
    }
  }
  return argv;
}

}  // namespace nsel
