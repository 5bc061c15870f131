#include "nsel/sys/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "nsel/core/error.hpp"

namespace nsel {
namespace fs = std::filesystem;

fs::path temporary_sibling(const fs::path& path) {
  return path.parent_path() / ("." + path.filename().string() + ".tmp-" + std::to_string(getpid()));
}

void commit_file(const fs::path& temporary, const fs::path& path) {
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string problem = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw Error("cannot write " + quote(path.string()) + ": " + problem, 1);
  }
}

void write_file_atomically(const fs::path& path, std::string_view text) {
  const fs::path temporary = temporary_sibling(path);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error("cannot write " + quote(path.string()) + ": " + std::strerror(errno), 1);
  }
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string problem = std::strerror(errno);
      ::close(fd);
      ::unlink(temporary.c_str());
      throw Error("cannot write " + quote(path.string()) + ": " + problem, 1);
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    const std::string problem = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw Error("cannot write " + quote(path.string()) + ": " + problem, 1);
  }
  commit_file(temporary, path);
}

std::optional<std::string> read_small_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return buffer.str();
}

}  // namespace nsel
