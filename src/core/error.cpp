#include "nsel/core/error.hpp"

#include <cstdio>

namespace nsel {

std::string quote(std::string_view value) {
  std::string out = "'";
  for (unsigned char c : value) {
    switch (c) {
      case '\'':
        out += "\\'";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", c);
          out += hex;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "'";
  return out;
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
