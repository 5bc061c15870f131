// Files that are never seen half-written: written under a temporary name in the same folder,
// then renamed.
#pragma once

#include <sys/types.h>

#include <filesystem>
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

// Reads a whole file; nullopt when it cannot be read.
std::optional<std::string> read_small_file(const std::filesystem::path& path);

}  // namespace nsel
