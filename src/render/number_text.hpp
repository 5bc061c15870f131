// Numbers as the terminal tables, CSV files and the HTML page print them: rounded as nsys stats
// rounds (SQLite's ROUND), so every output shows the same digits.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "nsel/analyze/summary.hpp"

namespace nsel::render_detail {

inline std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, round_like_sqlite(value, digits));
  return buffer;
}

// Nanoseconds as milliseconds with three decimals.
inline std::string ms(long long ns) {
  return fixed(static_cast<double>(ns) / 1e6, 3);
}
inline std::string ms_text(double ns) {
  return fixed(ns / 1e6, 3);
}
// With one decimal, for the demo's narrow step columns.
inline std::string ms_tenths(long long ns) {
  return fixed(static_cast<double>(ns) / 1e6, 1);
}

// Every percentage a person reads: one decimal, rounded as above, a space before the sign.
inline std::string percent_text(double percent) {
  return fixed(percent, 1) + " %";
}

// A change, with its sign: "+5.2 %", "-0.8 %"; one that rounds to zero has none ("0.0 %").
inline std::string signed_percent_text(double percent) {
  if (!std::isfinite(percent)) return "-";
  const std::string digits = fixed(percent, 1);
  if (digits == "0.0" || digits == "-0.0") return "0.0 %";
  return (percent > 0 ? "+" : "") + digits + " %";
}

}  // namespace nsel::render_detail
