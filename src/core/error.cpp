#include "nsel/core/error.hpp"

#include <cstdio>

#include "nsel/core/terminal_text.hpp"

namespace nsel {

std::string quote(std::string_view value) {
  std::string escaped;
  escaped.reserve(value.size());
  for (char c : value) {
    if (c == '\'' || c == '\\') escaped += '\\';
    escaped += c;
  }
  // Controls, C0 and C1 alike, by the one rule every terminal text follows.
  return "'" + terminal_text(escaped) + "'";
}

std::string bad_value(std::string_view source, std::string_view value, std::string_view problem,
                      std::string_view expected) {
  std::string message(source);
  message += "=";
  message += quote(value);
  message += ": ";
  message += problem;
  message += "; expected ";
  message += expected;
  return message;
}

}  // namespace nsel
