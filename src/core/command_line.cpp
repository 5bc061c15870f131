#include "nsel/core/command_line.hpp"

#include <algorithm>

namespace nsel {

std::string shell_quote(std::string_view argument) {
  const bool plain = !argument.empty() && std::all_of(argument.begin(), argument.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_-+=%@,./:").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(argument);
  std::string out = "'";
  for (char c : argument) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& argument : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(argument);
  }
  return out;
}

}  // namespace nsel
