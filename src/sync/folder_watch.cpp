#include "sync/folder_watch.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace nsel::sync_detail {
namespace {

// What can make a file differ from its copy (size, time, content, a new name) and what makes a
// watched folder's path wrong (moved, removed). IN_ONLYDIR: a folder replaced by a file meanwhile
// is not watched.
constexpr std::uint32_t kEvents = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_ATTRIB |
                                  IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW |
                                  IN_EXCL_UNLINK;

}  // namespace

FolderWatch::FolderWatch(std::optional<std::size_t> limit) : limit_(limit) {
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) {
    failed_ = true;
    why_ = std::string("inotify is not available: ") + std::strerror(errno) +
           (errno == EMFILE ? " (fs.inotify.max_user_instances)" : "");
  }
}

FolderWatch::~FolderWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool FolderWatch::active() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return !failed_;
}

std::string FolderWatch::why() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return why_;
}

void FolderWatch::give_up(const std::string& reason) {
  if (failed_) return;
  failed_ = true;
  why_ = reason;
  // The descriptor is closed (freeing every watch) by take(), when no other thread adds.
}

bool FolderWatch::add(const WatchedFolder& folder) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (failed_) return false;
  const int wd = ::inotify_add_watch(fd_, folder.source.c_str(), kEvents);
  if (wd < 0) {
    // Gone, replaced or unreadable: nothing to watch there, and nothing a pass could copy
    // either (a full pass looks again).
    if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) return true;
    give_up("cannot watch " + folder.source.string() + ": " + std::strerror(errno) +
            (errno == ENOSPC ? " (the limit is fs.inotify.max_user_watches)" : ""));
    return false;
  }
  if (limit_ && !folders_.contains(wd) && folders_.size() >= *limit_) {
    ::inotify_rm_watch(fd_, wd);
    give_up("more than " + std::to_string(*limit_) + " folders to watch (the watch limit)");
    return false;
  }
  // The same folder (watched again, or moved and found again) keeps its descriptor.
  folders_[wd] = folder;
  return true;
}

void FolderWatch::drain() {
  if (fd_ < 0) return;
  alignas(inotify_event) char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EAGAIN: nothing more queued
    const std::lock_guard<std::mutex> lock(mutex_);
    for (ssize_t at = 0; at < n;) {
      inotify_event event;
      std::memcpy(&event, buffer + at, sizeof event);
      const char* name = buffer + at + static_cast<ssize_t>(sizeof event);
      at += static_cast<ssize_t>(sizeof event + event.len);
      if (event.mask & IN_Q_OVERFLOW) {
        lost_ = true;
        continue;
      }
      const auto found = folders_.find(event.wd);
      if (found == folders_.end()) continue;
      if (event.mask & IN_IGNORED) {  // the folder was removed (or its watch dropped)
        if (found->second.relative.empty()) roots_gone_.push_back(found->second.root);
        folders_.erase(found);
        continue;
      }
      // A moved folder's path (and its subfolders') is no longer the one watched.
      if (event.mask & (IN_MOVE_SELF | IN_UNMOUNT)) lost_ = true;
      if (event.len == 0 || (event.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT))) continue;
      // A subfolder matters when it is new here; its own watch reports what happens inside.
      if ((event.mask & IN_ISDIR) && !(event.mask & (IN_CREATE | IN_MOVED_TO))) continue;
      auto [entry, added] = changed_.try_emplace(event.wd);
      if (added) entry->second.folder = found->second;
      entry->second.names.emplace(name);
    }
  }
}

void FolderWatch::wait_until(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return;
    if (fd_ < 0 || !active()) {
      std::this_thread::sleep_until(deadline);
      return;
    }
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    pollfd ready{fd_, POLLIN, 0};
    if (::poll(&ready, 1, static_cast<int>(std::min<long long>(left.count(), 60000))) > 0) {
      // Emptied as events come, so the kernel's queue does not overflow between passes; a
      // short rest lets a burst of writes collapse into fewer events.
      drain();
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(50), left));
    }
  }
}

FolderChanges FolderWatch::take() {
  drain();
  FolderChanges changes;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (failed_ && fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    folders_.clear();
  }
  changes.lost = lost_;
  lost_ = false;
  for (auto& [wd, folder] : changed_) changes.folders.push_back(std::move(folder));
  changed_.clear();
  changes.roots_gone = std::move(roots_gone_);
  roots_gone_.clear();
  return changes;
}

}  // namespace nsel::sync_detail
