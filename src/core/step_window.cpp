#include "nsel/core/step_window.hpp"

#include "core/python_text.hpp"
#include "nsel/core/error.hpp"

namespace nsel {
namespace {

constexpr std::string_view kExpected =
    "'start:stop' with whole numbers 1 <= start < stop, for example '2:4' (steps 2 and 3)";
constexpr std::string_view kListExpected =
    "comma-separated 'start:stop' windows with whole numbers 1 <= start < stop, each starting at "
    "or after the previous one's stop, for example '2:4,10:12' (steps 2, 3, 10 and 11)";

// Why `text` is not a window (the `problem` part of the message), or nothing when it is one.
struct WindowParse {
  StepWindow window;
  std::string problem;
};

// Blank as int() sees it: a value of spaces only is a missing number.
std::string_view trim(std::string_view s) {
  return python::strip_int_space(s);
}

// Sets `number`, or returns why `text` is not a whole number. Reads numbers as Python's int()
// does, as NeMo RL does (blanks around, a sign, '1_0', digits of any script such as '３'), limited
// to 64 bits: the contract refuses values that overflow.
std::string parse_number(std::string_view text, std::string_view what, long long& number) {
  const std::string_view digits = trim(text);
  if (digits.empty()) return std::string(what) + " is missing";
  switch (python::parse_int(digits, number)) {
    case python::IntParse::ok:
      return "";
    case python::IntParse::too_large:
      return std::string(what) + " " + quote(digits) + " is too large";
    case python::IntParse::invalid:
      break;
  }
  return std::string(what) + " " + quote(digits) + " is not a whole number";
}

WindowParse parse_window(std::string_view text) {
  WindowParse out;
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    out.problem = "missing ':' between start and stop";
    return out;
  }
  if (text.find(':', colon + 1) != std::string_view::npos) {
    out.problem = "more than one ':'";
    return out;
  }
  out.problem = parse_number(text.substr(0, colon), "start", out.window.start);
  if (out.problem.empty())
    out.problem = parse_number(text.substr(colon + 1), "stop", out.window.stop);
  if (!out.problem.empty()) return out;
  if (out.window.start < 1) {
    out.problem = "start must be >= 1 (steps are 1-based)";
  } else if (out.window.stop <= out.window.start) {
    out.problem = "empty range (stop must be greater than start; stop is exclusive)";
  }
  return out;
}

}  // namespace

std::string StepWindow::text() const {
  return std::to_string(start) + ":" + std::to_string(stop);
}

StepWindow parse_step_window(std::string_view value, std::string_view source) {
  WindowParse parsed = parse_window(value);
  if (!parsed.problem.empty()) throw Error(bad_value(source, value, parsed.problem, kExpected));
  return parsed.window;
}

std::vector<StepWindow> parse_step_windows(std::string_view value, std::string_view source) {
  if (value.find(',') == std::string_view::npos) return {parse_step_window(value, source)};
  std::vector<StepWindow> windows;
  size_t begin = 0;
  while (begin <= value.size()) {
    size_t comma = value.find(',', begin);
    if (comma == std::string_view::npos) comma = value.size();
    const std::string_view item = value.substr(begin, comma - begin);
    const std::string which = "window " + std::to_string(windows.size() + 1);
    if (trim(item).empty()) {
      throw Error(bad_value(source, value, which + " is empty", kListExpected));
    }
    WindowParse parsed = parse_window(item);
    if (!parsed.problem.empty()) {
      throw Error(bad_value(source, value, which + " " + quote(trim(item)) + ": " + parsed.problem,
                            kListExpected));
    }
    if (!windows.empty() && parsed.window.start < windows.back().stop) {
      throw Error(bad_value(source, value,
                            which + " " + quote(trim(item)) + " starts before window " +
                                std::to_string(windows.size()) + " " +
                                quote(windows.back().text()) +
                                " stops (windows must be increasing and must not overlap)",
                            kListExpected));
    }
    windows.push_back(parsed.window);
    begin = comma + 1;
  }
  return windows;
}

std::string windows_text(const std::vector<StepWindow>& windows) {
  std::string out;
  for (const StepWindow& window : windows) {
    if (!out.empty()) out += ',';
    out += window.text();
  }
  return out;
}

}  // namespace nsel
