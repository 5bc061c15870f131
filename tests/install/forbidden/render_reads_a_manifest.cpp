// Must not build: render only draws. It reads a manifest on its own, the way render/ls.cpp once
// judged reports from disk, and the check after the build (cmake/NselDrawsOnly.cmake) names it.
#include <fstream>
#include <string>

#include "nsel/core/manifest.hpp"
#include "nsel/sys/files.hpp"

namespace nsel {

std::string worker_of_manifest(const std::filesystem::path& path) {
  const std::optional<std::string> text = read_small_file(path);
  return text ? parse_manifest(*text, path.string()).worker : std::string();
}

std::string first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace nsel
