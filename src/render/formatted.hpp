// printf-style formatting into a std::string (GCC 12 has no std::format). The text outputs were
// printf calls: the same format strings through this give the same bytes.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace nsel::render_detail {

[[gnu::format(printf, 1, 2)]] inline std::string formatted(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out;
  if (size > 0) {
    out.resize(static_cast<std::size_t>(size));
    // Writes the terminating '\0' on the string's own one, which is allowed.
    std::vsnprintf(out.data(), out.size() + 1, format, again);
  }
  va_end(again);
  return out;
}

}  // namespace nsel::render_detail
