// The copy engine of a pass: mirrors folders with several threads, file by file, as
// nsel/sync/mirror.hpp describes.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nsel/sync/mirror.hpp"
#include "sync/folder_watch.hpp"
#include "sync/state.hpp"

namespace nsel::sync_detail {

using SteadyClock = std::chrono::steady_clock;

// Counts shared by the threads of one pass; the thread that started the pass reports them.
struct Counters {
  std::atomic<std::uint64_t> folders{0};
  std::atomic<std::uint64_t> files{0};
  std::atomic<std::uint64_t> copied{0};
  std::atomic<std::uint64_t> bytes_copied{0};
  std::atomic<std::uint64_t> failed{0};

  void add_to(PassStats& stats) const {
    stats.folders += folders.load();
    stats.files += files.load();
    stats.copied += copied.load();
    stats.bytes_copied += bytes_copied.load();
    stats.failed += failed.load();
  }
};

// One mirrored folder (a session's logs) and what its previous pass left. A resident sync
// keeps it from pass to pass.
struct MirrorRoot {
  std::size_t number = 0;  // its place among the roots a sync keeps
  // LOG_DIR: below it, folders are made and opened without following links (empty: none).
  std::filesystem::path base;
  std::filesystem::path destination;
  SyncState state;
  bool loaded = false;   // its state was read from the destination
  bool watched = false;  // every folder in it was watched when last visited in full
};

// One folder to visit: every file in it is compared (and copied), every subfolder becomes a
// task of its own, so that a pass keeps several file-system requests in flight at once.
struct FolderTask {
  MirrorRoot* root = nullptr;
  std::filesystem::path source;
  std::filesystem::path destination;
  std::string relative;  // below the mirrored folder: "" or ending in '/'
  // Set: look only at these entries (what the kernel said changed), not the whole listing.
  std::optional<std::vector<std::string>> only;
};

class Mirror {
 public:
  // `watch`, when given, is told of every folder a full visit lists, before it lists it.
  Mirror(const SyncObserver& observer, Counters& counters, FolderWatch* watch = nullptr)
      : observer_(observer), stats_(counters), watch_(watch) {}

  // Visits every folder of `root`, mirroring `source` into root.destination.
  void add_root(MirrorRoot& root, const std::filesystem::path& source);

  // Looks again at the entries `names` of one folder of `root` (visited in full before).
  void add_changed(MirrorRoot& root, const WatchedFolder& folder, std::vector<std::string> names);

  // Visits every folder with up to `threads` threads, reporting progress from this one.
  // `save_state` false: what the pass found is kept in memory only, and written by a later
  // pass (a state older than the copies only costs time, never a copy).
  void run(size_t threads, SteadyClock::time_point started, bool save_state = true);

  size_t roots() const { return roots_.size(); }

 private:
  void push(FolderTask task);

  void work();

  void problem(const std::string& message);

  void visit(const FolderTask& task);

  // Returns whether the destination folder changed.
  bool file(int src_dir, int dst_dir, const std::string& name, const struct stat& src_st,
            const FolderTask& task, const SyncState::Folder* known_folder, bool trusted,
            SyncState::Batch& batch);

  // Streams the file into ".<name>.nsel-partial", then renames it over <name>. Returns the
  // source's size and time as the copy carries them, or nullopt when nothing was renamed.
  std::optional<SyncState::Times> copy(int src_dir, int dst_dir, const std::string& name,
                                       const std::filesystem::path& source,
                                       const std::filesystem::path& destination);

  // Links are recreated as links (never followed). Returns whether one was (re)made.
  bool link(int src_dir, int dst_dir, const std::string& name,
            const std::filesystem::path& destination);

  const SyncObserver& observer_;
  Counters& stats_;
  FolderWatch* watch_;
  std::vector<MirrorRoot*> roots_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable idle_;
  std::deque<FolderTask> tasks_;
  size_t outstanding_ = 0;
  bool finished_ = false;
  std::mutex problem_mutex_;
};

}  // namespace nsel::sync_detail
