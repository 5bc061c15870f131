// What a pass mirrors: each Ray session's logs folder and where it goes.
#pragma once

#include <cstddef>
#include <filesystem>
#include <vector>

#include "nsel/sync/mirror.hpp"

namespace nsel::sync_detail {

struct MirrorJob {
  std::filesystem::path source;
  std::filesystem::path destination;
  std::filesystem::path base;  // LOG_DIR, above the destination
};

// Folders are visited by several threads: a pass mostly waits for the file system (a shared
// one above all), so more requests in flight finish it sooner even on few cores.
constexpr size_t kMirrorThreads = 8;

// Each session's logs folder now at the source, and where it goes.
std::vector<MirrorJob> session_jobs(const SyncSettings& settings);

// Whether LOG_DIR/ENDED is there: the job ended, the next pass is the last.
bool ended(const SyncSettings& settings);

}  // namespace nsel::sync_detail
