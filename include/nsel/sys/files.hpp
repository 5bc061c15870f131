// Files that are never seen half-written: written under a temporary name in the same folder,
// then renamed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace nsel {

// A temporary name beside `path` (".<name>.tmp-<pid>"), for writers that produce the file
// themselves (a copy, a program's output) and then call commit_file.
std::filesystem::path temporary_sibling(const std::filesystem::path& path);

// Renames `temporary` over `path`; removes `temporary` and throws nsel::Error (exit code 1)
// naming `path` when that fails.
void commit_file(const std::filesystem::path& temporary, const std::filesystem::path& path);

// Writes `text` to `path` atomically. Throws nsel::Error (exit code 1) on failure, leaving
// `path` as it was.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// Reads a whole file; nullopt when it cannot be read.
std::optional<std::string> read_small_file(const std::filesystem::path& path);

}  // namespace nsel
