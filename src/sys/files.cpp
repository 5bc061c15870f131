#include "nsel/sys/files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "nsel/core/error.hpp"
#include "nsel/sys/process.hpp"

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

// Writes all of `text` to `fd`; errno's value on failure, 0 on success.
int write_all(int fd, std::string_view text) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

// Writes `text` under temporary_sibling(path) and renames it over `path`: the new file with
// `mode` exactly and flushed to disk when a mode is given, else 0644 less the umask. The system's
// reason on failure, with nothing left behind.
std::optional<std::string> write_and_rename(const fs::path& path, std::string_view text,
                                            std::optional<mode_t> mode) {
  const fs::path temporary = temporary_sibling(path);
  // The name is predictable: whatever another user planted there (a link to a file of ours) is
  // removed, and the file made anew, never followed.
  ::unlink(temporary.c_str());
  // A stop signal while it is written (under a StopCleanup) leaves no half-written temporary.
  const RemovedOnStop remove_on_stop(temporary);
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return std::string(std::strerror(errno));
  const auto fail = [&](int error) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return std::string(std::strerror(error));
  };
  if (const int error = write_all(fd, text); error != 0) return fail(error);
  if (mode && (::fchmod(fd, *mode) != 0 || ::fsync(fd) != 0)) return fail(errno);
  if (::close(fd) != 0) {
    const std::string problem = std::strerror(errno);
    ::unlink(temporary.c_str());
    return problem;
  }
  return rename_over(temporary, path);
}

// /dev/null, /dev/zero and /dev/full (memory devices 1:3, 1:5, 1:7) and terminals (majors 4 and
// 5, and 136-143 for pseudo-terminals): written to as a shell's '>' would, and no harm done.
// Any other device is never even opened (opening one may act: a tape rewinds).
bool harmless_character_device(const struct stat& info) {
  const unsigned kind = major(info.st_rdev);
  if (kind == 1) {
    const unsigned which = minor(info.st_rdev);
    return which == 3 || which == 5 || which == 7;
  }
  return kind == 4 || kind == 5 || (kind >= 136 && kind <= 143);
}

// As the kernel's protected_symlinks does: a link in a folder anybody may write, made by another
// user than this one and the folder's owner, is not followed (another user's link is how a
// co-tenant points an output at a file or a device of ours).
std::optional<std::string> refused_output_link(const fs::path& path) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return std::nullopt;
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0 || (dir.st_mode & S_IWOTH) == 0) return std::nullopt;
  if (link.st_uid == ::geteuid() || link.st_uid == dir.st_uid) return std::nullopt;
  return "it is a link made by another user (uid " + std::to_string(link.st_uid) +
         ") in a folder anybody may write: not followed";
}

// An output path that names a device, a FIFO or a socket (--html /dev/stdout, a named pipe) is
// written in place, as a shell's '>' would: renaming a new file over it would replace the node
// itself, and for /dev/full would lose the very failure the user asked to see. A FIFO without a
// reader is refused rather than waited on. A folder is refused. nullopt when `path` is a regular
// file or does not exist: the caller writes it atomically.
std::optional<std::optional<std::string>> write_special_in_place(const fs::path& path,
                                                                 std::string_view text) {
  if (auto refused = refused_output_link(path)) return std::optional<std::string>(*refused);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode)) return std::nullopt;
  if (S_ISDIR(info.st_mode)) return std::optional<std::string>("it is a folder");
  if (S_ISBLK(info.st_mode)) {
    return std::optional<std::string>("it is a block device (a disk): nsel writes no device");
  }
  if (S_ISCHR(info.st_mode) && !harmless_character_device(info)) {
    return std::optional<std::string>(
        "it is a character device (" + std::to_string(major(info.st_rdev)) + ":" +
        std::to_string(minor(info.st_rdev)) +
        ") other than /dev/null, /dev/zero, /dev/full or a terminal: nsel writes no device");
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENXIO && S_ISFIFO(info.st_mode)) {
      return std::optional<std::string>("it is a named pipe with no reader");
    }
    return std::optional<std::string>(std::strerror(errno));
  }
  // Blocking again: a slow reader is waited for, not an error.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  int error = write_all(fd, text);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) return std::optional<std::string>(std::strerror(error));
  return std::optional<std::string>(std::nullopt);
}

}  // namespace

void commit_file(const fs::path& temporary, const fs::path& path) {
  if (const auto problem = rename_over(temporary, path)) {
    throw Error("cannot write " + quote(path.string()) + ": " + *problem, 1);
  }
}

void write_file_atomically(const fs::path& path, std::string_view text) {
  std::optional<std::string> problem;
  if (const auto special = write_special_in_place(path, text)) {
    problem = *special;
  } else {
    problem = write_and_rename(path, text, std::nullopt);
  }
  if (problem) {
    throw Error("cannot write " + quote(path.string()) + ": " + *problem, 1);
  }
}

std::optional<std::string> replace_file_atomically(const fs::path& path, std::string_view text,
                                                   mode_t mode) {
  return write_and_rename(path, text, mode);
}

int rename_no_replace(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  // A file system without RENAME_NOREPLACE (NFS): a check, then a plain rename.
  if (anything_at(to)) return EEXIST;
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

bool anything_at(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
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

SmallFile read_capped_file(const fs::path& path, std::size_t cap) {
  SmallFile out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    out.problem = std::string("cannot be read: ") + std::strerror(errno);
    return out;
  }
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    out.problem = std::string("cannot be read: ") + std::strerror(errno);
  } else if (S_ISDIR(info.st_mode)) {
    out.problem = "is a folder";
  } else if (!S_ISREG(info.st_mode)) {
    out.problem = std::string("is not a regular file (") +
                  (S_ISFIFO(info.st_mode)  ? "a named pipe"
                   : S_ISCHR(info.st_mode) ? "a character device"
                   : S_ISBLK(info.st_mode) ? "a block device"
                                           : "a socket") +
                  ")";
  } else if (static_cast<std::uintmax_t>(info.st_size) > cap) {
    out.problem =
        "is larger than " + std::to_string(cap) + " bytes (" + std::to_string(info.st_size) + ")";
  } else {
    // The size may change while it is read: never more than the cap.
    std::string text;
    char buffer[65536];
    while (true) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        out.problem = std::string("cannot be read: ") + std::strerror(errno);
        break;
      }
      if (n == 0) {
        out.text = std::move(text);
        break;
      }
      if (text.size() + static_cast<std::size_t>(n) > cap) {
        out.problem = "is larger than " + std::to_string(cap) + " bytes";
        break;
      }
      text.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

std::optional<std::string> read_small_file(const fs::path& path) {
  return read_capped_file(path, kSmallFileCap).text;
}

fs::path temporary_folder_setting() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? fs::path(tmpdir) : fs::path("/tmp");
}

fs::path temporary_folder() {
  const fs::path folder = temporary_folder_setting();
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    throw Error(bad_value("TMPDIR", folder.string(), ec ? ec.message() : "not a folder",
                          "a folder for temporary files, or TMPDIR unset (then /tmp)"));
  }
  return folder;
}

std::optional<fs::path> create_private_temporary_file(std::string_view prefix) {
  std::string name = (temporary_folder_setting() / (std::string(prefix) + ".XXXXXX")).string();
  const int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  ::close(fd);
  return fs::path(name);
}

int new_file_refusal(const fs::path& folder) {
  const fs::path probe =
      folder / (".nsel-probe-" + std::to_string(getpid()) + "-" + std::to_string(gettid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errno;
  ::close(fd);
  ::unlink(probe.c_str());
  return 0;
}

bool append_to_own_file(const fs::path& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat info {};
  bool written = false;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == geteuid()) {
    written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  }
  ::close(fd);
  return written;
}

FileLock::FileLock(const fs::path& path, std::chrono::milliseconds wait,
                   const std::function<bool()>& keep_waiting) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) return;
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != geteuid()) {
    ::close(fd);
    return;
  }
  // flock has no timeout: tried again every 10 ms until `wait` has passed.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() >= deadline ||
        (keep_waiting && !keep_waiting())) {
      ::close(fd);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fd_ = fd;
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  release();
}

void FileLock::release() {
  if (fd_ >= 0) ::close(fd_);  // closing the only descriptor releases the flock
  fd_ = -1;
}

}  // namespace nsel
