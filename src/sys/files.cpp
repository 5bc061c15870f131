#include "nsel/sys/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
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

namespace {

// Renames `temporary` over `path`; the system's reason on failure, with `temporary` removed.
std::optional<std::string> rename_over(const fs::path& temporary, const fs::path& path) {
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string problem = std::strerror(errno);
    ::unlink(temporary.c_str());
    return problem;
  }
  return std::nullopt;
}

// Writes `text` under temporary_sibling(path) and renames it over `path`: the new file with
// `mode` exactly and flushed to disk when a mode is given, else 0644 less the umask. The system's
// reason on failure, with nothing left behind.
std::optional<std::string> write_and_rename(const fs::path& path, std::string_view text,
                                            std::optional<mode_t> mode) {
  const fs::path temporary = temporary_sibling(path);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::string(std::strerror(errno));
  const auto fail = [&](int error) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return std::string(std::strerror(error));
  };
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno);
    }
    written += static_cast<size_t>(n);
  }
  if (mode && (::fchmod(fd, *mode) != 0 || ::fsync(fd) != 0)) return fail(errno);
  if (::close(fd) != 0) {
    const std::string problem = std::strerror(errno);
    ::unlink(temporary.c_str());
    return problem;
  }
  return rename_over(temporary, path);
}

}  // namespace

void commit_file(const fs::path& temporary, const fs::path& path) {
  if (const auto problem = rename_over(temporary, path)) {
    throw Error("cannot write " + quote(path.string()) + ": " + *problem, 1);
  }
}

void write_file_atomically(const fs::path& path, std::string_view text) {
  if (const auto problem = write_and_rename(path, text, std::nullopt)) {
    throw Error("cannot write " + quote(path.string()) + ": " + *problem, 1);
  }
}

std::optional<std::string> replace_file_atomically(const fs::path& path, std::string_view text,
                                                   mode_t mode) {
  return write_and_rename(path, text, mode);
}

std::error_code replace_symlink(const fs::path& target, const fs::path& link) {
  const fs::path temporary = temporary_sibling(link);
  std::error_code ec;
  fs::remove(temporary, ec);
  fs::create_symlink(target, temporary, ec);
  if (!ec) fs::rename(temporary, link, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
  }
  return ec;
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
