#include "nsel/core/error.hpp"

#include <cstdio>

namespace nsel {

std::string quote(std::string_view value) {
  std::string out = "'";
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
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
      default: {
        char hex[16];
        const auto next = i + 1 < value.size() ? static_cast<unsigned char>(value[i + 1]) : 0;
        if (c < 0x20 || c == 0x7f) {
          std::snprintf(hex, sizeof hex, "\\x%02x", c);
          out += hex;
        } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
          // A C1 control (U+0080..U+009F), which a terminal takes as an escape: as terminal_text
          // shows it.
          std::snprintf(hex, sizeof hex, "\\u00%02x", next);
          out += hex;
          ++i;
        } else {
          out += static_cast<char>(c);
        }
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
