// nsel sync: the SLURM log sync, as an incremental, crash-safe mirror.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/render/json_text.hpp"
#include "nsel/render/sync.hpp"
#include "nsel/sync/mirror.hpp"
#include "nsel/sys/host.hpp"

namespace nsel::cli {
namespace {

struct SyncOptions {
  std::string source;
  std::string dest;
  std::string every;
  std::string node;
  std::string full_every;
  std::string max_watches;
  bool head = false;
  bool json = false;
  bool node_ip = false;
  bool quiet = false;
};

}  // namespace

Action add_sync(CLI::App& app) {
  auto options = std::make_shared<SyncOptions>();
  CLI::App* sync = app.add_subcommand(
      "sync",
      "Copy this node's Ray logs (reports included) to the job's shared log folder, as NeMo RL's\n"
      "SLURM log sync does: each SRC/session_[0-9]*/logs/ goes to LOG_DIR/ray/<session>/logs/\n"
      "on the head node and to LOG_DIR/ray/<node>/<session>/logs/ on the others. Only files\n"
      "whose size or modification time differ are copied; each is written under a hidden\n"
      "temporary name and renamed when complete, so a killed sync never leaves a partial file\n"
      "under a real name; nothing at the destination is deleted or truncated. A report still\n"
      "being written is copied again once it changes. Repeats every --every seconds and stops\n"
      "after the first full pass that finds LOG_DIR/ENDED (without --every: one pass).\n"
      "Between passes it watches every source folder (inotify), and a pass looks only at what\n"
      "changed; a pass looks at every file when it is the first or the last (ENDED), at least\n"
      "every --full-every seconds (writes through a shared memory map or a hard link elsewhere\n"
      "raise no event), and always once watching fails (then said once on stderr).\n"
      "Defaults: LOG_DIR=$BASE_LOG_DIR/$SLURM_JOB_ID-logs ($SLURM_JOB_ID-restart<N>-logs when\n"
      "SLURM_RESTART_COUNT=N>0); --every from RAY_LOG_SYNC_FREQUENCY; the head is the node\n"
      "with SLURM_NODEID=0 (or none), the others use their host name.\n"
      "Usage: nsel sync [--src DIR] [--dest LOG_DIR] [--every SECONDS [--full-every SECONDS]\n"
      "       [--max-watches N]] [--head|--node NAME|--node-ip] [--json] [--quiet]");
  sync->add_option("--src", options->source, "the Ray temp folder (default /tmp/ray)")
      ->type_name("DIR");
  sync->add_option("--dest", options->dest, "the job's log folder LOG_DIR")->type_name("LOG_DIR");
  sync->add_option("--every", options->every,
                   "seconds between passes (default: RAY_LOG_SYNC_FREQUENCY; unset: one pass)")
      ->type_name("SECONDS");
  sync->add_option("--full-every", options->full_every,
                   "with --every: the most seconds between passes that look at every file\n"
                   "(default 600; 0: every pass does)")
      ->type_name("SECONDS");
  sync->add_option("--max-watches", options->max_watches,
                   "with --every: the most source folders to watch for changes (default: as\n"
                   "many as fs.inotify.max_user_watches allows; 0: none, every pass is full)")
      ->type_name("N");
  sync->add_option("--node", options->node, "this node's folder name (default: its host name)")
      ->type_name("NAME");
  sync->add_flag("--head", options->head, "this is the head node: no node folder");
  sync->add_flag("--node-ip", options->node_ip, "name this node's folder by its IP address");
  sync->add_flag("--quiet", options->quiet,
                 "no progress lines, only problems and changes of method");
  sync->add_flag("--json", options->json,
                 std::string("one JSON line per finished pass on stdout: schema (") +
                     kSyncJsonSchema +
                     "), pass, full,\n"
                     "sessions, folders, files, copied, bytes_copied, failed, seconds, ended");

  return [options](const std::vector<std::string>& trailing) -> int {
    if (!trailing.empty()) throw Error("nsel sync takes no PROGRAM; see 'nsel sync --help'");
    SyncRequest request;
    if (!options->source.empty()) request.source = options->source;
    if (!options->dest.empty()) request.dest = options->dest;
    if (!options->every.empty()) request.every = options->every;
    if (!options->node.empty()) request.node = options->node;
    if (!options->full_every.empty()) request.full_every = options->full_every;
    if (!options->max_watches.empty()) request.max_watches = options->max_watches;
    if (options->node_ip) {
      if (options->head || request.node) {
        throw Error("--node-ip names the node's folder: use it without --head and --node");
      }
      request.node = node_ip_address();
    }
    request.head = options->head;
    const SyncSettings settings = resolve_sync_settings(request, environment_variable);
    std::error_code ec;
    if (!std::filesystem::is_directory(settings.source, ec)) {
      throw Error(bad_value("--src", settings.source.string(), "no such folder",
                            "the Ray temp folder holding session_* (default /tmp/ray)"));
    }
    const std::string target =
        (settings.log_dir / "ray" / (settings.node.empty() ? "" : settings.node)).string();
    if (!options->quiet) {
      tell_line("nsel sync: " + shown(settings.source.string()) + " -> " + shown(target) +
                (settings.every.count() > 0 ? " (until ENDED)" : ""));
    }
    SyncObserver observer;
    const auto say = [](const std::string& message) { tell_line("nsel sync: " + message); };
    observer.problem = say;
    observer.notice = say;
    const bool quiet = options->quiet;
    const bool json = options->json;
    observer.progress = [quiet, json](const PassStats& stats, bool final) {
      if (final && json) {
        std::printf("%s\n", json_text(render_sync_pass_json(stats), JsonLayout::line).c_str());
        std::fflush(stdout);
      }
      // Progress only on passes that take a while, and every pass that copied something.
      if (quiet && !(final && stats.failed > 0)) return;
      if (final && stats.copied == 0 && stats.failed == 0 &&
          stats.elapsed < std::chrono::seconds(2)) {
        return;
      }
      std::fprintf(stderr, "nsel sync: %s\n", render_sync_progress_text(stats, final).c_str());
    };
    const PassStats last = sync_loop(settings, observer);
    return last.failed == 0 ? 0 : 1;
  };
}

}  // namespace nsel::cli
