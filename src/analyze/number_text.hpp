// Numbers as the terminal tables, CSV files and the HTML page print them: rounded as nsys stats
// rounds (SQLite's ROUND), so every output shows the same digits.
#pragma once

#include <cstdio>
#include <string>

#include "nsel/analyze/summary.hpp"

namespace nsel::analyze_text {

inline std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, round_like_sqlite(value, digits));
  return buffer;
}

// Nanoseconds as milliseconds with three decimals.
inline std::string ms(long long ns) {
  return fixed(static_cast<double>(ns) / 1e6, 3);
}

}  // namespace nsel::analyze_text
