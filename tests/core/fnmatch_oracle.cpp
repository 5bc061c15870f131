// Reads JSON lines [pattern, name] and prints 1 or 0 per line: the C++ side of the comparison
// with Python's fnmatch.fnmatchcase.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "nsel/core/pattern.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto pair = nlohmann::json::parse(line);
    std::cout << (nsel::fnmatch_case(pair[0].get<std::string>(), pair[1].get<std::string>()) ? '1'
                                                                                             : '0')
              << '\n';
  }
  return 0;
}
