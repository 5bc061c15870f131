// The sync's settings: flags first, then what the SLURM job script's environment gives.
#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "nsel/core/error.hpp"
#include "nsel/sync/mirror.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

// Seconds between passes, fractions allowed: a number from 0 to a year, else nothing.
std::optional<double> period_of(const std::string& text) {
  double seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || !(seconds >= 0) ||
      seconds > 86400.0 * 365) {
    return std::nullopt;
  }
  return seconds;
}

std::chrono::milliseconds to_milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0 + 0.5));
}

// Whether `path` is `folder` or lies below it, both as the file system resolves them (links
// followed), so that a link cannot hide that the source holds the destination.
bool holds(const fs::path& folder, const fs::path& path) {
  std::error_code ec;
  std::string outer = fs::weakly_canonical(folder, ec).string();
  if (ec) return false;
  std::string inner = fs::weakly_canonical(path, ec).string();
  if (ec) return false;
  while (outer.size() > 1 && outer.back() == '/') outer.pop_back();
  while (inner.size() > 1 && inner.back() == '/') inner.pop_back();
  if (outer == "/") return true;
  return inner == outer || inner.starts_with(outer + "/");
}

}  // namespace

fs::path slurm_log_dir(std::string_view base_log_dir, std::string_view job_id,
                       std::string_view restart_count) {
  std::string name(job_id);
  long long restarts = 0;
  const auto [end, ec] =
      std::from_chars(restart_count.data(), restart_count.data() + restart_count.size(), restarts);
  if (ec == std::errc() && end == restart_count.data() + restart_count.size() && restarts > 0) {
    name += "-restart" + std::to_string(restarts);
  }
  return fs::path(base_log_dir) / (name + "-logs");
}

SyncSettings resolve_sync_settings(const SyncRequest& request, const SyncEnvLookup& lookup) {
  SyncSettings settings;
  const auto value_of = [&](std::string_view name) {
    auto value = lookup(name);
    if (value && value->empty()) value.reset();
    return value;
  };
  if (request.source) {
    if (request.source->empty()) {
      throw Error(
          bad_value("--src", *request.source, "empty", "the Ray temp folder, e.g. /tmp/ray"));
    }
    settings.source = *request.source;
  }
  if (request.dest) {
    if (request.dest->empty()) {
      throw Error(bad_value("--dest", *request.dest, "empty", "the job's log folder (LOG_DIR)"));
    }
    settings.log_dir = *request.dest;
  }
  // What BASE_LOG_DIR holds, when LOG_DIR is made from it: an error about it quotes this value.
  std::optional<std::string> base_log_dir;
  if (!request.dest) {
    const auto base = value_of("BASE_LOG_DIR");
    base_log_dir = base;
    const auto job = value_of("SLURM_JOB_ID");
    if (!base || !job) {
      throw Error(std::string("no destination: --dest is not given and ") +
                  (!base ? "BASE_LOG_DIR" : "SLURM_JOB_ID") +
                  " is not set; expected --dest LOG_DIR, or BASE_LOG_DIR and SLURM_JOB_ID "
                  "(LOG_DIR is then $BASE_LOG_DIR/$SLURM_JOB_ID-logs)");
    }
    const std::string restarts = value_of("SLURM_RESTART_COUNT").value_or("");
    if (!restarts.empty() && restarts.find_first_not_of("0123456789") != std::string::npos) {
      // A guess would mirror into another restart's folder.
      throw Error(bad_value("SLURM_RESTART_COUNT", restarts, "not a whole number",
                            "the count of restarts SLURM sets, e.g. '1' (LOG_DIR is then "
                            "$BASE_LOG_DIR/$SLURM_JOB_ID-restart1-logs)"));
    }
    settings.log_dir = slurm_log_dir(*base, *job, restarts);
  }
  std::string every_source = "--every";
  std::optional<std::string> every = request.every;
  if (!every) {
    every = value_of("RAY_LOG_SYNC_FREQUENCY");
    every_source = "RAY_LOG_SYNC_FREQUENCY";
  }
  if (every) {
    const auto seconds = period_of(*every);
    if (!seconds || *seconds <= 0) {
      throw Error(bad_value(every_source, *every, "not a positive number of seconds",
                            "seconds between passes, e.g. '30' or '0.5'"));
    }
    settings.every = std::max(std::chrono::milliseconds(1), to_milliseconds(*seconds));
  }
  if (request.full_every) {
    const auto seconds = period_of(*request.full_every);
    if (!seconds) {
      throw Error(bad_value("--full-every", *request.full_every, "not a number of seconds",
                            "the most seconds between passes that look at every file, e.g. "
                            "'600'; '0': every pass does"));
    }
    settings.full_every = to_milliseconds(*seconds);
    if (settings.every.count() == 0) {
      throw Error(bad_value("--full-every", *request.full_every,
                            "given without --every (or RAY_LOG_SYNC_FREQUENCY): a single pass "
                            "looks at every file anyway",
                            "--full-every together with --every SECONDS"));
    }
  }
  if (request.max_watches) {
    std::size_t count = 0;
    const std::string& text = *request.max_watches;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
      throw Error(bad_value("--max-watches", text, "not a whole number",
                            "the most folders to watch for changes, e.g. '10000'; '0': none"));
    }
    settings.max_watches = count;
  }
  if (request.head && request.node) {
    throw Error(bad_value("--node", *request.node, "given together with --head",
                          "either --head (copies go to LOG_DIR/ray/<session>) or --node NAME"));
  }
  if (request.node) {
    const std::string& node = *request.node;
    if (node.empty() || node == "." || node == ".." || node.find('/') != std::string::npos ||
        node.rfind("session_", 0) == 0) {
      throw Error(bad_value("--node", node, "not usable as a folder name",
                            "the node's host name or IP, without '/'"));
    }
    settings.node = node;
  } else if (!request.head) {
    // SLURM numbers the nodes of a job from 0; the Ray head runs on the first one.
    const auto node_id = value_of("SLURM_NODEID");
    if (node_id && *node_id != "0") {
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      settings.node = host;
    }
  }
  // Checked last, as it looks at the file system. A destination inside the source would be mirrored
  // into itself, one level deeper each pass.
  if (holds(settings.source, settings.log_dir)) {
    const std::string flag = request.dest ? "--dest" : "BASE_LOG_DIR";
    const std::string value = request.dest ? *request.dest : base_log_dir.value_or("");
    throw Error(bad_value(flag, value,
                          "inside the source folder " + quote(settings.source.string()) +
                              ", whose copies would then hold copies of themselves",
                          "a folder outside it, e.g. on the shared file system"));
  }
  return settings;
}

}  // namespace nsel
