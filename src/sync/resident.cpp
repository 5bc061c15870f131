// The resident loop of `--every`: passes until the job ends, watching folders in between.
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "nsel/sync/mirror.hpp"
#include "sync/copier.hpp"
#include "sync/folder_watch.hpp"
#include "sync/pass.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

using sync_detail::Counters;
using sync_detail::ended;
using sync_detail::FolderChanges;
using sync_detail::FolderWatch;
using sync_detail::kMirrorThreads;
using sync_detail::Mirror;
using sync_detail::MirrorJob;
using sync_detail::MirrorRoot;
using sync_detail::session_jobs;
using sync_detail::SteadyClock;

// The sync of `--every`: keeps what it learnt (each session's state, a watch on every source
// folder) from pass to pass, so that a pass after the first looks only at what the kernel said
// changed. A pass is full (looks at every file) when it is the first, when LOG_DIR/ENDED is
// there (the last pass), when `full_every` has passed since the last full one, and whenever
// watching failed or events were lost.
class ResidentSync {
 public:
  ResidentSync(const SyncSettings& settings, const SyncObserver& observer)
      : settings_(settings), observer_(observer) {
    if (!settings.max_watches || *settings.max_watches > 0) {
      watch_ = std::make_unique<FolderWatch>(settings.max_watches);
    }
  }

  PassStats pass() {
    const auto started = SteadyClock::now();
    const bool saw_ended = ended(settings_);
    FolderChanges changes;
    if (watch_) changes = watch_->take();
    const bool watching = watch_ && watch_->active();
    if (changes.lost && !told_lost_) {
      notice(
          "some changes may have gone unseen (the kernel's event queue overflowed or a "
          "watched folder moved): this pass looks at every file");
      told_lost_ = true;
    }
    const bool full = !watching || changes.lost || saw_ended || passes_ == 0 ||
                      started - last_full_ >= settings_.full_every;
    for (const std::size_t gone : changes.roots_gone) roots_[gone]->watched = false;

    const std::vector<MirrorJob> jobs = session_jobs(settings_);
    Counters counters;
    Mirror mirror(observer_, counters, watching ? watch_.get() : nullptr);
    // Indexed by root number; a root made in this pass is numbered below this size.
    std::vector<bool> in_full(roots_.size() + jobs.size(), false);
    std::vector<bool> present(in_full.size(), false);
    for (const MirrorJob& job : jobs) {
      MirrorRoot& root = root_for(job.destination);
      root.base = job.base;
      present[root.number] = true;
      if (full || !root.watched) {
        mirror.add_root(root, job.source);
        root.watched = watching;
        in_full[root.number] = true;
      }
    }
    if (!full) {
      for (FolderChanges::Folder& changed : changes.folders) {
        const std::size_t root = changed.folder.root;
        if (root >= present.size() || !present[root] || in_full[root]) continue;
        mirror.add_changed(*roots_[root], changed.folder,
                           std::vector<std::string>(changed.names.begin(), changed.names.end()));
      }
    }
    // The state is written by full passes only: a watched pass with a growing log to copy
    // should not rewrite the state of every file (the last pass is full).
    mirror.run(kMirrorThreads, started, full);
    if (full) last_full_ = started;
    if (watch_ && !watch_->active() && !told_unwatched_) {
      notice("watching folders for changes stopped (" + watch_->why() +
             "): every pass now looks at every file");
      told_unwatched_ = true;
    }
    PassStats stats;
    counters.add_to(stats);
    stats.sessions = jobs.size();
    stats.saw_ended = saw_ended;
    stats.full = full;
    stats.number = ++passes_;
    stats.elapsed = SteadyClock::now() - started;
    return stats;
  }

  // Until `deadline`, taking in the kernel's events as they come.
  void wait_until(SteadyClock::time_point deadline) {
    if (watch_) {
      watch_->wait_until(deadline);
    } else {
      std::this_thread::sleep_until(deadline);
    }
  }

 private:
  MirrorRoot& root_for(const fs::path& destination) {
    const auto [found, added] = by_destination_.try_emplace(destination.string(), roots_.size());
    if (added) {
      roots_.push_back(std::make_unique<MirrorRoot>());
      roots_.back()->number = found->second;
      roots_.back()->destination = destination;
    }
    return *roots_[found->second];
  }

  void notice(const std::string& message) {
    if (observer_.notice) observer_.notice(message);
  }

  const SyncSettings& settings_;
  const SyncObserver& observer_;
  std::unique_ptr<FolderWatch> watch_;
  std::vector<std::unique_ptr<MirrorRoot>> roots_;  // never shrinks: numbers stay valid
  std::unordered_map<std::string, std::size_t> by_destination_;
  SteadyClock::time_point last_full_{};
  std::uint64_t passes_ = 0;
  bool told_lost_ = false;
  bool told_unwatched_ = false;
};

}  // namespace

PassStats sync_loop(const SyncSettings& settings, const SyncObserver& observer) {
  if (settings.every.count() == 0) return sync_pass(settings, observer);
  ResidentSync resident(settings, observer);
  for (;;) {
    const auto began = SteadyClock::now();
    const PassStats stats = resident.pass();
    if (observer.progress) observer.progress(stats, true);
    if (stats.saw_ended) return stats;
    resident.wait_until(began + settings.every);
  }
}

}  // namespace nsel
