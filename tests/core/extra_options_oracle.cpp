// Reads lines of hex-encoded NRL_NSYS_EXTRA_OPTIONS values and prints, per line, the options they
// give ("key=value" joined by U+001E, as hex) or "error": the C++ side of the comparison with
// Python's json.loads and str() of each value (what NeMo RL hands to Ray's nsys command).
#include <iostream>
#include <string>

#include "nsel/core/error.hpp"
#include "nsel/core/nsys_options.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string value;
    for (size_t i = 0; i + 1 < line.size(); i += 2) {
      value.push_back(static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16)));
    }
    try {
      nsel::NsysOptions options;
      options.merge_json(value);
      std::string out;
      for (const auto& [key, text] : options.entries()) {
        if (!out.empty()) out += '\x1e';
        out += key + "=" + text;
      }
      static const char* hex = "0123456789abcdef";
      for (unsigned char c : out) std::cout << hex[c >> 4] << hex[c & 15];
      std::cout << '\n';
    } catch (const nsel::Error&) {
      std::cout << "error\n";
    }
  }
  return 0;
}
