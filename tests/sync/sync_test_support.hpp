// What the sync room's unit tests share: a fresh temporary folder per test, small file helpers,
// and a forked child for faults that need another user or a mount of their own (header only:
// the tests link the sync room alone).
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/sync/mirror.hpp"

namespace nsel::sync_test {

namespace fs = std::filesystem;

// A folder made by mkdtemp for one test, removed with everything in it when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string name = (fs::temp_directory_path() / "nsel-sync-test-XXXXXX").string();
    if (::mkdtemp(name.data()) != nullptr) path_ = name;
  }
  ~TempDir() {
    if (path_.empty()) return;
    // Folders a test made read-only must be writable again to be emptied.
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(path_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
    }
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline void write_file(const fs::path& file, std::string_view text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

inline void append_file(const fs::path& file, std::string_view text) {
  std::ofstream out(file, std::ios::binary | std::ios::app);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// The whole file, or nullopt when it cannot be opened.
inline std::optional<std::string> read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Sets a file's modification time to `seconds` + `nanoseconds` since the epoch, so that tests do
// not depend on how fine the kernel's clock is.
inline void set_mtime(const fs::path& file, long long seconds, long nanoseconds = 0) {
  const timespec times[2] = {{seconds, nanoseconds}, {seconds, nanoseconds}};
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << file;
}

inline struct stat lstat_of(const fs::path& file) {
  struct stat st {};
  EXPECT_EQ(::lstat(file.c_str(), &st), 0) << file;
  return st;
}

// Every entry below `folder`, relative, sorted ("a", "a/b", ...); links are listed, not followed.
inline std::vector<std::string> tree(const fs::path& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().lexically_relative(folder).string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Deterministic bytes of any length (NULs and high bytes included), different per `seed`.
inline std::string pattern_bytes(std::size_t size, unsigned seed) {
  std::string text(size, '\0');
  unsigned x = seed * 2654435761u + 1;
  for (char& c : text) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 16);
  }
  return text;
}

// The pass's numbers and problems as one text, so that a child can send them and a test can
// compare them whole.
inline std::string describe(const PassStats& stats, const std::vector<std::string>& problems) {
  std::string text =
      "sessions=" + std::to_string(stats.sessions) + " files=" + std::to_string(stats.files) +
      " copied=" + std::to_string(stats.copied) + " bytes=" + std::to_string(stats.bytes_copied) +
      " failed=" + std::to_string(stats.failed) + "\n";
  for (const std::string& problem : problems) text += "problem: " + problem + "\n";
  return text;
}

// One pass from `source` into `log_dir`, its problems collected.
inline PassStats pass_once(const fs::path& source, const fs::path& log_dir,
                           std::vector<std::string>* problems = nullptr,
                           const std::string& node = "") {
  SyncSettings settings;
  settings.source = source;
  settings.log_dir = log_dir;
  settings.node = node;
  SyncObserver observer;
  observer.problem = [problems](const std::string& message) {
    if (problems != nullptr) problems->push_back(message);
  };
  return sync_pass(settings, observer);
}

// Exit codes of a child that could not set itself up: the test then skips with the reason.
inline constexpr int kCannotBecomeNobody = 90;
inline constexpr int kCannotMount = 99;
inline constexpr int kBodyThrew = 92;

struct ChildResult {
  int exit_code = -1;
  std::string text;  // what the body returned (or the exception's text)
};

// Runs `body` in a forked child after `prepare` (which may _exit with one of the codes above);
// returns the child's exit code and the text `body` returned.
inline ChildResult in_child(const std::function<void()>& prepare,
                            const std::function<std::string()>& body) {
  int channel[2];
  if (::pipe(channel) != 0) return {};
  const pid_t child = ::fork();
  if (child < 0) return {};
  if (child == 0) {
    ::close(channel[0]);
    prepare();
    int code = 0;
    std::string text;
    try {
      text = body();
    } catch (const std::exception& e) {
      text = e.what();
      code = kBodyThrew;
    }
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(channel[1], text.data() + done, text.size() - done);
      if (n <= 0) ::_exit(91);
      done += static_cast<std::size_t>(n);
    }
    ::_exit(code);
  }
  ::close(channel[1]);
  ChildResult result;
  char buffer[4096];
  for (ssize_t n; (n = ::read(channel[0], buffer, sizeof buffer)) > 0;) {
    result.text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(channel[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// Permission bits stop nothing for root: a child that is root becomes nobody (65534) first, so
// that a denied folder is denied for real. Hand the files it needs to nobody with give_to_nobody.
inline void become_nobody() {
  if (::geteuid() != 0) return;
  if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
      ::setresuid(65534, 65534, 65534) != 0) {
    ::_exit(kCannotBecomeNobody);
  }
}

// Makes `folder` and everything below it nobody's when the test runs as root (for become_nobody).
inline void give_to_nobody(const fs::path& folder) {
  if (::geteuid() != 0) return;
  ASSERT_EQ(::lchown(folder.c_str(), 65534, 65534), 0) << folder;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    ASSERT_EQ(::lchown(entry.path().c_str(), 65534, 65534), 0) << entry.path();
  }
}

// In the child: a mount namespace of its own with a tmpfs of `size` (mount's form, "64k") on
// `folder`, gone with the child. Exits kCannotMount where mounting is not allowed.
inline std::function<void()> small_tmpfs(const fs::path& folder, const std::string& size) {
  return [folder, size] {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", folder.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) {
      ::_exit(kCannotMount);
    }
  };
}

// The skip reason for a child that could not set itself up, or "" when it ran.
inline std::string setup_failure(const ChildResult& result) {
  if (result.exit_code == kCannotBecomeNobody) {
    return "running as root, and cannot become nobody (65534) here, so permission bits would not "
           "stop the copy";
  }
  if (result.exit_code == kCannotMount) {
    return "cannot mount a small tmpfs here (needs root and mount namespaces), so a full disk "
           "cannot be made";
  }
  return "";
}

// Looks variables up in a fixed table (SyncEnvLookup), as the environment would.
inline SyncEnvLookup env_of(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    const auto found = variables.find(std::string(name));
    if (found == variables.end()) return std::nullopt;
    return found->second;
  };
}

}  // namespace nsel::sync_test
