// Watches the source folders of a resident sync (Linux inotify), so that a pass after the first
// needs to look only at the folders and files the kernel says changed.
//
// The kernel reports writes, creations, renames into a folder and time or mode changes made
// through a watched folder. It does not report writes through a shared memory map nor writes
// through a hard link in another folder, so a caller must still make some passes full.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace nsel::sync_detail {

// A folder below a mirrored one, as a pass visits it.
struct WatchedFolder {
  std::size_t root = 0;  // the caller's number for the mirrored folder
  std::filesystem::path source;
  std::filesystem::path destination;
  std::string relative;  // below the mirrored folder: "" or ending in '/'
};

// What changed since the last take().
struct FolderChanges {
  struct Folder {
    WatchedFolder folder;
    std::set<std::string> names;  // entries to look at again (files, or new subfolders)
  };
  bool lost = false;  // events were lost or a watched folder moved: only a full pass is right
  std::vector<Folder> folders;
  std::vector<std::size_t> roots_gone;  // mirrored folders removed (or moved) at the source
};

class FolderWatch {
 public:
  // `limit`: the most folders watched (nullopt: as many as the kernel allows).
  explicit FolderWatch(std::optional<std::size_t> limit);
  ~FolderWatch();
  FolderWatch(const FolderWatch&) = delete;
  FolderWatch& operator=(const FolderWatch&) = delete;

  // False once watching failed for good (see why()): every pass must then be full.
  bool active() const;
  std::string why() const;

  // Watches `folder` (call before listing it, so that nothing added after the listing is
  // missed). Safe from several threads. Returns false when it could not: watching then stops.
  bool add(const WatchedFolder& folder);

  // Gathers events until `deadline` (sleeps meanwhile); returns at once when not active.
  void wait_until(std::chrono::steady_clock::time_point deadline);

  // Gathers what is queued and hands over everything gathered since the last call.
  FolderChanges take();

 private:
  void give_up(const std::string& reason);  // with mutex_ held
  void drain();

  int fd_ = -1;
  std::optional<std::size_t> limit_;
  mutable std::mutex mutex_;
  bool failed_ = false;
  std::string why_;
  std::unordered_map<int, WatchedFolder> folders_;  // by watch descriptor
  std::unordered_map<int, FolderChanges::Folder> changed_;
  bool lost_ = false;
  std::vector<std::size_t> roots_gone_;
};

}  // namespace nsel::sync_detail
