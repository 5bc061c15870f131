// Files that are never seen half-written: written under a temporary name in the same folder,
// then renamed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace nsel {

// A temporary name beside `path` (".<name>.tmp-<pid>"), for writers that produce the file
// themselves (a copy, a program's output) and then call commit_file.
std::filesystem::path temporary_sibling(const std::filesystem::path& path);

// Renames `temporary` over `path`; removes `temporary` and throws nsel::Error (exit code 1)
// naming `path` when that fails.
void commit_file(const std::filesystem::path& temporary, const std::filesystem::path& path);

// Writes `text` to `path` atomically. Throws nsel::Error (exit code 1) on failure, leaving
// `path` as it was. A `path` that exists and is not a regular file is never replaced: a device,
// FIFO or socket is written in place (as a shell's '>' would; a FIFO with no reader is an
// error), a folder is an error.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// The same for a file replaced in place (an installed one): the new file gets exactly the
// permission bits `mode` (those of the file it replaces, say) and is on disk before the rename.
// The system's reason on failure (nothing is left behind), nullopt on success.
std::optional<std::string> replace_file_atomically(const std::filesystem::path& path,
                                                   std::string_view text, mode_t mode);

// Points the symbolic link `link` at `target`: a new link under temporary_sibling(link), renamed
// over the old one, so readers never find it missing. The system's error, if any.
// Moves `from` to `to` in one step unless `to` exists (renameat2 RENAME_NOREPLACE; a check and a
// rename where the file system lacks it): 0, or the system's errno (EEXIST: `to` is taken).
int rename_no_replace(const std::filesystem::path& from, const std::filesystem::path& to);

// Whether anything, even a dangling link, is at `path`.
bool anything_at(const std::filesystem::path& path);

std::error_code replace_symlink(const std::filesystem::path& target,
                                const std::filesystem::path& link);

// What reading a small file gave: its text, or why it was not read (one phrase, for a message
// that names the file).
struct SmallFile {
  std::optional<std::string> text;
  std::string problem;
};

// Reads a whole regular file of at most `cap` bytes, whatever is at `path`: opened
// non-blocking (a FIFO without a writer never blocks) and checked after opening, so a FIFO, a
// device (a link to /dev/zero), a folder or a larger file is refused without reading it.
SmallFile read_capped_file(const std::filesystem::path& path, std::size_t cap);

// The cap of read_small_file: nsel's small files (manifests, logs, records) are far below it.
inline constexpr std::size_t kSmallFileCap = 16 * 1024 * 1024;

// read_capped_file(path, kSmallFileCap)'s text; nullopt when it cannot be read.
std::optional<std::string> read_small_file(const std::filesystem::path& path);

// The temporary folder as nsys and the C library's tools choose it: $TMPDIR when set and not
// empty, else /tmp. Unchecked: where a helper such as nsys left its files.
std::filesystem::path temporary_folder_setting();

// The same, for nsel to write in: a TMPDIR that is not a folder is nsel::Error (exit code 2)
// naming it, never the C++ library's "filesystem error" or a file made in the working folder.
std::filesystem::path temporary_folder();

// A new empty file only this user can read and write, "<prefix>.XXXXXX" in the temporary folder
// (mkstemp); nullopt when none can be made there.
std::optional<std::filesystem::path> create_private_temporary_file(std::string_view prefix);

// Whether `folder` takes a new file now, tried for real (permission bits do not stop root, a
// read-only mount or a full disk does): 0 when it does, else the errno of the refusal. The probe
// file, named for this process and thread, is removed at once.
int new_file_refusal(const std::filesystem::path& folder);

// Appends `text` to `path` in one write, only where `path` already is a regular file of this
// user: never creates a file, never follows a link. Whether it was written.
bool append_to_own_file(const std::filesystem::path& path, std::string_view text);

// An exclusive advisory lock (flock) on `path`, a regular file of this user that it creates
// (0600) when missing; never follows a link, never blocks on a special file. Waits at most
// `wait` for the lock, asking `keep_waiting` (when given) every 10 ms; unlocked (file
// descriptor -1) when it cannot be had in time, `keep_waiting` says no, or the file is not this
// user's, so a lock never stops its holder's work for longer than `wait`.
class FileLock {
 public:
  FileLock() = default;
  FileLock(const std::filesystem::path& path, std::chrono::milliseconds wait,
           const std::function<bool()>& keep_waiting = {});
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  bool held() const { return fd_ >= 0; }
  void release();

 private:
  int fd_ = -1;
};

}  // namespace nsel
