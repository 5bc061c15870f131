// What the previous pass of a sync saw, kept at the destination.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nsel::sync_detail {

// What the previous pass saw, kept at the destination (".nsel-sync/state" in the mirrored
// folder) so that a pass over unchanged files need not look at the copies again: a file whose
// size and time match the entry, in a destination folder whose own time shows no entry added,
// removed or renamed since, is known to be copied. Anything else is checked at the destination
// as usual, so a missing or stale state only costs time.
class SyncState {
 public:
  struct Times {
    long long size = 0;
    long long seconds = 0;
    long long nanoseconds = 0;
    bool operator==(const Times&) const = default;
  };
  // One folder below the mirrored one: its copy's time and its files' sizes and times, kept
  // together so that a visit looks its files up in a small table of its own.
  struct Folder {
    std::optional<Times> times;
    std::unordered_map<std::string, Times> files;
  };

  // In a folder of its own, so that replacing it never changes the mirrored folder's time.
  static constexpr const char* kFolder = ".nsel-sync";
  static constexpr const char* kFileName = ".nsel-sync/state";

  // Makes the state's folder in the mirrored folder open as `dir_fd`.
  static void prepare(int dir_fd) { ::mkdirat(dir_fd, kFolder, 0755); }

  // Reads the state of the mirrored folder (the destination); none or a bad one is no state.
  void load(const std::filesystem::path& mirrored);

  // Takes in what the pass found. Entries of files gone from the source stay: they are never
  // looked up again unless the same file comes back.
  void take_in();

  // Takes in what the pass found and writes the whole state when something changed since it was
  // last written, atomically (sys/files.hpp).
  void save(const std::filesystem::path& mirrored);

  // What the last pass knew of the folder `relative` ("" or ending in '/'); nullptr if nothing.
  // The state is not changed during a pass, so every thread may read it.
  const Folder* folder(const std::string& relative) const;

  // What one folder's visit changed; merged when the visit ends, applied when saved.
  struct Batch {
    std::string folder;
    std::optional<Times> folder_times;
    std::vector<std::pair<std::string, Times>> files;
  };
  void merge(Batch& batch);

 private:
  void parse_line(std::string_view line);

  static void append_line(std::string& text, char kind, const Times& times,
                          const std::string& folder, const std::string& name);

  std::unordered_map<std::string, Folder> folders_;
  std::vector<Batch> updates_;
  bool unsaved_ = false;
  std::mutex mutex_;
};

// A file's or folder's size and modification time, as the state keeps them.
SyncState::Times times_of(const struct stat& st);

}  // namespace nsel::sync_detail
