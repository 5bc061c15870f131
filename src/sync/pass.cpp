// A single pass: every session's logs folder mirrored once.
#include "sync/pass.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "nsel/reports/layout.hpp"
#include "sync/copier.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace sync_detail {

std::vector<MirrorJob> session_jobs(const SyncSettings& settings) {
  std::error_code ec;
  fs::path target = settings.log_dir / "ray";
  if (!settings.node.empty()) target /= settings.node;
  std::vector<std::string> sessions;
  for (const auto& entry : fs::directory_iterator(settings.source, ec)) {
    const std::string name = entry.path().filename().string();
    // session_latest is only a link to one of these.
    if (is_ray_session_name(name) && entry.is_directory(ec) && !entry.is_symlink(ec)) {
      sessions.push_back(name);
    }
  }
  std::sort(sessions.begin(), sessions.end());
  std::vector<MirrorJob> jobs;
  for (const std::string& session : sessions) {
    const fs::path logs = settings.source / session / "logs";
    if (fs::is_directory(logs, ec))
      jobs.push_back({logs, target / session / "logs", settings.log_dir});
  }
  return jobs;
}

bool ended(const SyncSettings& settings) {
  std::error_code ec;
  return fs::exists(settings.log_dir / kEndedFile, ec);
}

}  // namespace sync_detail

namespace {

using sync_detail::Counters;
using sync_detail::Mirror;
using sync_detail::MirrorJob;
using sync_detail::MirrorRoot;
using sync_detail::SteadyClock;

PassStats run_jobs(const std::vector<MirrorJob>& jobs, const SyncObserver& observer) {
  const auto started = SteadyClock::now();
  std::vector<std::unique_ptr<MirrorRoot>> roots;
  Counters counters;
  Mirror mirror(observer, counters);
  for (const MirrorJob& job : jobs) {
    roots.push_back(std::make_unique<MirrorRoot>());
    roots.back()->destination = job.destination;
    roots.back()->base = job.base;
    mirror.add_root(*roots.back(), job.source);
  }
  mirror.run(sync_detail::kMirrorThreads, started);
  PassStats stats;
  counters.add_to(stats);
  stats.sessions = mirror.roots();
  stats.elapsed = SteadyClock::now() - started;
  return stats;
}

}  // namespace

PassStats sync_pass(const SyncSettings& settings, const SyncObserver& observer) {
  const bool saw_ended = sync_detail::ended(settings);
  PassStats stats = run_jobs(sync_detail::session_jobs(settings), observer);
  stats.saw_ended = saw_ended;
  stats.number = 1;
  if (observer.progress) observer.progress(stats, true);
  return stats;
}

}  // namespace nsel
