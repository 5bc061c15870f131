// Reads lines of hex-encoded NRL_NSYS_PROFILE_STEP_RANGE values and prints, per line, "start stop"
// or "error": the C++ side of the comparison with NeMo RL's parsing (Python's int()).
#include <iostream>
#include <string>

#include "nsel/core/error.hpp"
#include "nsel/core/step_window.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string value;
    for (size_t i = 0; i + 1 < line.size(); i += 2) {
      value.push_back(static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16)));
    }
    try {
      const auto windows = nsel::parse_step_windows(value);
      std::cout << windows.front().start << ' ' << windows.front().stop << '\n';
    } catch (const nsel::Error&) {
      std::cout << "error\n";
    }
  }
  return 0;
}
