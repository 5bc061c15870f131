// The SLURM log sync: every node copies its Ray sessions' logs (reports included) to the shared
// log folder while the job runs, as an incremental, crash-safe mirror.
//
// Each /tmp/ray/session_[0-9]*/logs/ goes to LOG_DIR/ray/<session>/logs/ (head) or
// LOG_DIR/ray/<node>/<session>/logs/ (other nodes). A file is copied when its size or
// modification time differs from the copy's; it is written under a hidden temporary name
// (".<name>.nsel-partial") and renamed over the final name only when complete, with the
// source's modification time, so a file that changed while being copied is copied again on the
// next pass. Nothing at the destination is ever deleted or truncated in place. What a pass
// found is kept in "<mirrored folder>/.nsel-sync/state", so that the next pass needs only the
// source's sizes and times; a destination folder whose time changed is checked file by file.
//
// A sync that repeats (`every`) also watches every source folder (Linux inotify) after its first
// pass, and a later pass looks only at the files and folders the kernel said changed. Passes
// that look at every file still come: the first, the last (begun with LOG_DIR/ENDED present),
// one at least every `full_every`, and every pass once watching fails (too many folders,
// inotify unavailable) or events are lost (the kernel's queue overflowed). The kernel reports no
// writes through a shared memory map, nor through a hard link in an unwatched folder, nor those
// another machine makes on a network file system: those reach the copy in the next full pass.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace nsel {

inline constexpr std::string_view kPartialSuffix = ".nsel-partial";
inline constexpr std::string_view kEndedFile = "ENDED";

struct SyncSettings {
  std::filesystem::path source = "/tmp/ray";  // the Ray temp folder holding session_*
  std::filesystem::path log_dir;              // LOG_DIR: ENDED lives here; copies under ray/
  std::string node;                           // empty: the head node (no node folder)
  std::chrono::milliseconds every{0};         // 0: a single pass
  // With `every`: the longest time between two passes that look at every file (0: each pass).
  std::chrono::milliseconds full_every{std::chrono::minutes(10)};
  // With `every`: the most source folders watched for changes (nullopt: as many as the kernel
  // allows; 0: none, every pass looks at every file).
  std::optional<std::size_t> max_watches;
};

// Reads the settings the SLURM job script gives: --dest or BASE_LOG_DIR/SLURM_JOB_ID(-restart),
// --every or RAY_LOG_SYNC_FREQUENCY, --node/--head or SLURM_NODEID (0: the head) and
// SLURMD_NODENAME or the host name. Throws
// nsel::Error (exit code 2) naming the flag or variable on a bad or missing value.
struct SyncRequest {
  std::optional<std::string> source;
  std::optional<std::string> dest;
  std::optional<std::string> every;
  std::optional<std::string> node;         // this node's folder name (the caller may pass its IP)
  std::optional<std::string> full_every;   // --full-every SECONDS
  std::optional<std::string> max_watches;  // --max-watches N
  bool head = false;
};
using SyncEnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
SyncSettings resolve_sync_settings(const SyncRequest& request, const SyncEnvLookup& lookup);

// LOG_DIR for a SLURM job: $BASE_LOG_DIR/$SLURM_JOB_ID-logs, or
// $BASE_LOG_DIR/$SLURM_JOB_ID-restart<N>-logs when SLURM_RESTART_COUNT=N > 0 (a requeued job
// never mixes its logs with those of the run before).
std::filesystem::path slurm_log_dir(std::string_view base_log_dir, std::string_view job_id,
                                    std::string_view restart_count);

struct PassStats {
  std::uint64_t number = 0;  // 1 for a sync's first pass
  bool full = true;          // looked at every file (not only at what the kernel said changed)
  std::uint64_t sessions = 0;
  std::uint64_t folders = 0;  // folders looked at
  std::uint64_t files = 0;    // regular files and links looked at
  std::uint64_t copied = 0;   // files (re)written at the destination
  std::uint64_t bytes_copied = 0;
  std::uint64_t failed = 0;  // files that could not be copied (each reported)
  bool saw_ended = false;    // LOG_DIR/ENDED existed when the pass began
  std::chrono::steady_clock::duration elapsed{};
};

// Told about progress: during a pass (final=false, at most every `progress_interval`) and at
// its end (final=true). Problems with single files arrive as one-line messages.
struct SyncObserver {
  std::function<void(const PassStats&, bool final)> progress;
  std::function<void(const std::string& message)> problem;
  // A change of method worth knowing, said once (e.g. watching for changes stopped).
  std::function<void(const std::string& message)> notice;
  std::chrono::milliseconds progress_interval{2000};
};

// One pass over every session.
PassStats sync_pass(const SyncSettings& settings, const SyncObserver& observer = {});

// Passes every `settings.every` until the first full pass that began with LOG_DIR/ENDED present
// (or just one pass when `every` is 0), watching the source folders between passes (see above).
// Returns the last pass's numbers.
PassStats sync_loop(const SyncSettings& settings, const SyncObserver& observer = {});

}  // namespace nsel
