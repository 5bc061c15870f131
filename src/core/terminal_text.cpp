#include "nsel/core/terminal_text.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace nsel {

namespace {

constexpr std::string_view kCut = "...";

// The escape for the character starting at text[i], or empty when it shows as it is; `length`
// is set to the bytes it covers. Only called where a character starts (never inside one).
std::string escape_at(std::string_view text, std::size_t i, std::size_t& length) {
  const auto c = static_cast<unsigned char>(text[i]);
  length = 1;
  switch (c) {
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      break;
  }
  char hex[8];
  // A stray byte 0x80..0x9f, not part of a UTF-8 character, is an 8-bit C1 control (0x9b is
  // CSI) to a terminal that reads 8-bit controls.
  if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f)) {
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    return hex;
  }
  if (c == 0xc2 && i + 1 < text.size()) {
    const auto next = static_cast<unsigned char>(text[i + 1]);
    if (next >= 0x80 && next <= 0x9f) {
      length = 2;
      std::snprintf(hex, sizeof hex, "\\u00%02x", next);
      return hex;
    }
  }
  return {};
}

// Bytes of the UTF-8 character starting at text[i]: 1 for a stray byte, and for a lead byte
// whose sequence is cut short, so that a control byte after it is still escaped on its own.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length = 1;
  if (lead >= 0xf0 && lead < 0xf8) {
    length = 4;
  } else if (lead >= 0xe0 && lead < 0xf0) {
    length = 3;
  } else if (lead >= 0xc0 && lead < 0xe0) {
    length = 2;
  }
  if (i + length > text.size()) return 1;
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if (next < 0x80 || next > 0xbf) return 1;
  }
  return length;
}

}  // namespace

std::string terminal_text(std::string_view name, std::size_t max_bytes) {
  std::string out;
  const bool capped = max_bytes != std::string::npos;
  if (capped) max_bytes = std::max(max_bytes, kCut.size() + 1);
  // Room for the cut mark, so that a cut result stays within max_bytes.
  const std::size_t room = capped ? max_bytes - kCut.size() : max_bytes;
  out.reserve(capped ? std::min(name.size(), max_bytes) : name.size());
  std::size_t i = 0;
  while (i < name.size()) {
    std::size_t length = 1;
    std::string piece = escape_at(name, i, length);
    if (piece.empty()) {
      length = utf8_length(name, i);
      piece.assign(name.substr(i, length));
    }
    if (capped && out.size() + piece.size() > room) {
      // Does the rest fit whole (the mark would then be needless)?
      std::size_t end = out.size() + piece.size();
      std::size_t j = i + length;
      bool fits = end <= max_bytes;
      while (fits && j < name.size()) {
        std::size_t more = 1;
        const std::string escaped = escape_at(name, j, more);
        if (escaped.empty()) more = utf8_length(name, j);
        end += escaped.empty() ? more : escaped.size();
        j += more;
        fits = end <= max_bytes;
      }
      if (fits) {
        out += piece;
        i += length;
        continue;
      }
      return out + std::string(kCut);
    }
    out += piece;
    i += length;
  }
  return out;
}

bool has_control_characters(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 1;
    if (!escape_at(text, i, length).empty()) return true;
    i += utf8_length(text, i);
  }
  return false;
}

std::string last_output_lines(std::string_view output, std::size_t count) {
  std::vector<std::string_view> lines;
  std::size_t begin = 0;
  while (begin < output.size()) {
    std::size_t end = output.find('\n', begin);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(begin, end - begin);
    if (const std::size_t bar = line.rfind('\r'); bar != std::string_view::npos) {
      line = line.substr(bar + 1);
    }
    if (line.find_first_not_of(" \t") != std::string_view::npos) lines.push_back(line);
    begin = end + 1;
  }
  std::string joined;
  for (std::size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i) {
    if (!joined.empty()) joined += '\n';
    joined += lines[i];
  }
  return joined;
}

std::string last_output_line(std::string_view output) {
  return last_output_lines(output, 1);
}

}  // namespace nsel
