// Text as Python sees it, for the parts of the contract that NeMo RL leaves to Python: UTF-8
// decoded with surrogateescape (as os.environ does), str.isspace(), and int() of a string.
// Internal to core.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nsel::python {

// Decodes UTF-8 as Python does for valid text; each byte of an invalid sequence becomes its own
// code point in the surrogate range, as Python's surrogateescape does for environment values.
inline std::u32string decode(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = byte(i);
    size_t extra = 0;
    char32_t value = 0, minimum = 0;
    if (lead < 0x80) {
      out.push_back(lead);
      ++i;
      continue;
    }
    if ((lead & 0xE0) == 0xC0) {
      extra = 1, value = lead & 0x1F, minimum = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      extra = 2, value = lead & 0x0F, minimum = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      extra = 3, value = lead & 0x07, minimum = 0x10000;
    }
    bool valid = extra > 0;
    for (size_t k = 1; valid && k <= extra; ++k) {
      if (i + k >= text.size() || (byte(i + k) & 0xC0) != 0x80) {
        valid = false;
      } else {
        value = (value << 6) | (byte(i + k) & 0x3F);
      }
    }
    valid = valid && value >= minimum && value <= 0x10FFFF && !(value >= 0xD800 && value <= 0xDFFF);
    if (valid) {
      out.push_back(value);
      i += extra + 1;
    } else {
      out.push_back(0xDC00 + lead);
      ++i;
    }
  }
  return out;
}

// Bytes that `c` took in the input (an escaped invalid byte took one).
inline size_t utf8_width(char32_t c) {
  if (c < 0x80 || (c >= 0xDC80 && c <= 0xDCFF)) return 1;
  if (c < 0x800) return 2;
  if (c < 0x10000) return 3;
  return 4;
}

// Python's str.isspace() code points, which str.strip() removes.
inline bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// The blanks int() skips around a number: ASCII " \t\n\v\f\r" (not U+001C..U+001F, which
// str.isspace() counts but int() does not) and every non-ASCII str.isspace() code point.
inline bool is_int_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || (c >= 0x80 && is_space(c));
}

// The value 0-9 of a decimal digit (Unicode category Nd, which int() reads), or -1. Nd comes in
// runs of ten, 0 to 9; these are the first code points of the runs, from Python 3.11 (Unicode
// 14.0.0), generated with
//   python3 -c "import unicodedata as u, sys; print([hex(c) for c in range(sys.maxunicode + 1)
//               if u.decimal(chr(c), None) == 0])"
// (and checked there: 66 runs, every one 0..9, 660 code points, all of category Nd).
inline int decimal_value(char32_t c) {
  static constexpr char32_t kZeros[] = {
      0x30,    0x660,   0x6F0,   0x7C0,   0x966,   0x9E6,   0xA66,   0xAE6,   0xB66,   0xBE6,
      0xC66,   0xCE6,   0xD66,   0xDE6,   0xE50,   0xED0,   0xF20,   0x1040,  0x1090,  0x17E0,
      0x1810,  0x1946,  0x19D0,  0x1A80,  0x1A90,  0x1B50,  0x1BB0,  0x1C40,  0x1C50,  0xA620,
      0xA8D0,  0xA900,  0xA9D0,  0xA9F0,  0xAA50,  0xABF0,  0xFF10,  0x104A0, 0x10D30, 0x11066,
      0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0,
      0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2,
      0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0};
  for (char32_t zero : kZeros) {
    if (c >= zero && c < zero + 10) return static_cast<int>(c - zero);
    if (c < zero) break;  // increasing
  }
  return -1;
}

// `text` without the int() blanks around it, on whole code points.
inline std::string_view strip_int_space(std::string_view text) {
  const std::u32string points = decode(text);
  size_t first = 0, last = points.size();
  size_t begin = 0, end = text.size();
  while (first < last && is_int_space(points[first])) begin += utf8_width(points[first++]);
  while (last > first && is_int_space(points[last - 1])) end -= utf8_width(points[--last]);
  return text.substr(begin, end - begin);
}

enum class IntParse { ok, invalid, too_large };

// Python's int(text) (base 10), limited to a long long: blanks around, one optional sign, digits
// of any script, single underscores between digits ("1_0", not "_1", "1__0" or "1_").
inline IntParse parse_int(std::string_view text, long long& number) {
  const std::u32string points = decode(text);
  size_t i = 0, end = points.size();
  while (i < end && is_int_space(points[i])) ++i;
  while (end > i && is_int_space(points[end - 1])) --end;
  bool negative = false;
  if (i < end && (points[i] == '+' || points[i] == '-')) negative = points[i++] == '-';
  if (i == end) return IntParse::invalid;
  // Accumulated as a negative number, whose range holds the most negative long long too.
  long long value = 0;
  bool too_large = false;
  bool after_digit = false;
  for (; i < end; ++i) {
    if (points[i] == '_') {
      if (!after_digit || i + 1 == end) return IntParse::invalid;
      after_digit = false;
      continue;
    }
    const int digit = decimal_value(points[i]);
    if (digit < 0) return IntParse::invalid;
    after_digit = true;
    constexpr long long kMin = -9223372036854775807LL - 1;
    if (value < (kMin + digit) / 10) {
      too_large = true;
    } else {
      value = value * 10 - digit;
    }
  }
  if (too_large || (!negative && value == -9223372036854775807LL - 1)) return IntParse::too_large;
  number = negative ? value : -value;
  return IntParse::ok;
}

}  // namespace nsel::python
