#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>
#include <vector>

#include "nsel/error.hpp"
#include "nsel/sync.hpp"

namespace nsel {
namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

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
  } else {
    const auto base = value_of("BASE_LOG_DIR");
    const auto job = value_of("SLURM_JOB_ID");
    if (!base || !job) {
      throw Error(std::string("no destination: --dest is not given and ") +
                  (!base ? "BASE_LOG_DIR" : "SLURM_JOB_ID") +
                  " is not set; expected --dest LOG_DIR, or BASE_LOG_DIR and SLURM_JOB_ID "
                  "(LOG_DIR is then $BASE_LOG_DIR/$SLURM_JOB_ID-logs)");
    }
    settings.log_dir = slurm_log_dir(*base, *job, value_of("SLURM_RESTART_COUNT").value_or(""));
  }
  std::string every_source = "--every";
  std::optional<std::string> every = request.every;
  if (!every) {
    every = value_of("RAY_LOG_SYNC_FREQUENCY");
    every_source = "RAY_LOG_SYNC_FREQUENCY";
  }
  if (every) {
    double seconds = 0;
    const std::string& text = *every;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || end != text.data() + text.size() || !(seconds > 0) ||
        seconds > 86400.0 * 365) {
      throw Error(bad_value(every_source, text, "not a positive number of seconds",
                            "seconds between passes, e.g. '30' or '0.5'"));
    }
    settings.every = std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0 + 0.5));
    if (settings.every.count() == 0) settings.every = std::chrono::milliseconds(1);
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
  return settings;
}

namespace {

struct UniqueFd {
  int fd = -1;
  explicit UniqueFd(int value = -1) : fd(value) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() {
    if (fd >= 0) ::close(fd);
  }
};

bool same_time(const timespec& a, const timespec& b) {
  // Some shared file systems keep whole seconds only.
  return a.tv_sec == b.tv_sec && (a.tv_nsec == b.tv_nsec || b.tv_nsec == 0 || a.tv_nsec == 0);
}

std::string partial_name(const std::string& name) {
  std::string partial = "." + name + std::string(kPartialSuffix);
  if (partial.size() > 250) {
    partial = "." + std::to_string(std::hash<std::string>{}(name)) + std::string(kPartialSuffix);
  }
  return partial;
}

class Mirror {
 public:
  Mirror(const SyncObserver& observer, PassStats& stats)
      : observer_(observer), stats_(stats), started_(SteadyClock::now()), last_report_(started_) {}

  void folder(const fs::path& source, const fs::path& destination) {
    UniqueFd src(::open(source.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (src.fd < 0) return;  // a session removed meanwhile: nothing to copy
    std::error_code ec;
    fs::create_directories(destination, ec);
    UniqueFd dst(::open(destination.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dst.fd < 0) {
      problem("cannot create " + destination.string() + ": " + std::strerror(errno));
      return;
    }
    walk(src.fd, dst.fd, source, destination);
  }

  void finish() {
    stats_.elapsed = SteadyClock::now() - started_;
    if (observer_.progress) observer_.progress(stats_, true);
  }

 private:
  void problem(const std::string& message) {
    ++stats_.failed;
    if (observer_.problem) observer_.problem(message);
  }

  void tick() {
    if (!observer_.progress) return;
    const auto now = SteadyClock::now();
    if (now - last_report_ < observer_.progress_interval) return;
    last_report_ = now;
    stats_.elapsed = now - started_;
    observer_.progress(stats_, false);
  }

  void walk(int src_dir, int dst_dir, const fs::path& source, const fs::path& destination) {
    DIR* listing = ::fdopendir(::dup(src_dir));
    if (listing == nullptr) return;
    std::vector<std::pair<std::string, unsigned char>> entries;
    while (const dirent* d = ::readdir(listing)) {
      const std::string_view name = d->d_name;
      if (name == "." || name == "..") continue;
      entries.emplace_back(std::string(name), d->d_type);
    }
    ::closedir(listing);
    for (auto& [name, type] : entries) {
      struct stat st {};
      if (type == DT_UNKNOWN || type == DT_REG || type == DT_DIR) {
        if (::fstatat(src_dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
        type = S_ISREG(st.st_mode)   ? DT_REG
               : S_ISDIR(st.st_mode) ? DT_DIR
               : S_ISLNK(st.st_mode) ? DT_LNK
                                     : DT_UNKNOWN;
      }
      if (type == DT_DIR) {
        subfolder(src_dir, dst_dir, name, st, source, destination);
      } else if (type == DT_REG) {
        if (name.ends_with(kPartialSuffix)) continue;  // never copy a copy in progress
        ++stats_.files;
        file(src_dir, dst_dir, name, st, source, destination);
      } else if (type == DT_LNK) {
        ++stats_.files;
        link(src_dir, dst_dir, name, source, destination);
      }
      if ((stats_.files & 1023) == 0) tick();
    }
  }

  void subfolder(int src_dir, int dst_dir, const std::string& name, const struct stat& st,
                 const fs::path& source, const fs::path& destination) {
    UniqueFd src(::openat(src_dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (src.fd < 0) return;
    UniqueFd dst(::openat(dst_dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dst.fd < 0 && errno == ENOENT) {
      if (::mkdirat(dst_dir, name.c_str(), (st.st_mode & 07777) | 0700) != 0 && errno != EEXIST) {
        problem("cannot create " + (destination / name).string() + ": " + std::strerror(errno));
        return;
      }
      dst.fd = ::openat(dst_dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    if (dst.fd < 0) {
      problem("cannot open " + (destination / name).string() + ": " + std::strerror(errno));
      return;
    }
    walk(src.fd, dst.fd, source / name, destination / name);
  }

  void file(int src_dir, int dst_dir, const std::string& name, const struct stat& src_st,
            const fs::path& source, const fs::path& destination) {
    struct stat dst_st {};
    if (::fstatat(dst_dir, name.c_str(), &dst_st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(dst_st.st_mode) && dst_st.st_size == src_st.st_size &&
        same_time(src_st.st_mtim, dst_st.st_mtim)) {
      return;  // unchanged
    }
    copy(src_dir, dst_dir, name, source, destination);
  }

  // Streams the file into ".<name>.nsel-partial", then renames it over <name>.
  void copy(int src_dir, int dst_dir, const std::string& name, const fs::path& source,
            const fs::path& destination) {
    UniqueFd in(::openat(src_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (in.fd < 0) {
      if (errno != ENOENT)
        problem("cannot read " + (source / name).string() + ": " + std::strerror(errno));
      return;
    }
    struct stat before {};
    if (::fstat(in.fd, &before) != 0) return;
    const std::string partial = partial_name(name);
    UniqueFd out(
        ::openat(dst_dir, partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (out.fd < 0) {
      problem("cannot write " + (destination / partial).string() + ": " + std::strerror(errno));
      return;
    }
    std::uint64_t copied = 0;
    bool kernel_copy = true;
    std::vector<char> buffer;
    for (;;) {
      ssize_t n = -1;
      if (kernel_copy) {
        n = ::copy_file_range(in.fd, nullptr, out.fd, nullptr, 8u << 20, 0);
        if (n < 0 &&
            (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
          kernel_copy = false;
          buffer.resize(1u << 20);
          continue;
        }
      } else {
        n = ::read(in.fd, buffer.data(), buffer.size());
        if (n > 0) {
          for (ssize_t done = 0; done < n;) {
            const ssize_t w = ::write(out.fd, buffer.data() + done, static_cast<size_t>(n - done));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) {
              n = -1;
              break;
            }
            done += w;
          }
        }
      }
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        problem("cannot copy " + (source / name).string() + ": " + std::strerror(errno));
        ::unlinkat(dst_dir, partial.c_str(), 0);
        return;
      }
      copied += static_cast<std::uint64_t>(n);
      stats_.bytes_copied += static_cast<std::uint64_t>(n);
      tick();
    }
    // The time taken before copying: if the file changed meanwhile, its new time differs from
    // the copy's and the next pass copies it again.
    const timespec times[2] = {before.st_atim, before.st_mtim};
    ::fchmod(out.fd, before.st_mode & 07777);
    if (::futimens(out.fd, times) != 0 || ::close(out.fd) != 0) {
      out.fd = -1;
      problem("cannot finish " + (destination / partial).string() + ": " + std::strerror(errno));
      ::unlinkat(dst_dir, partial.c_str(), 0);
      return;
    }
    out.fd = -1;
    if (::renameat(dst_dir, partial.c_str(), dst_dir, name.c_str()) != 0) {
      problem("cannot rename " + (destination / partial).string() + ": " + std::strerror(errno));
      ::unlinkat(dst_dir, partial.c_str(), 0);
      return;
    }
    (void)copied;
    ++stats_.copied;
  }

  void link(int src_dir, int dst_dir, const std::string& name, const fs::path& source,
            const fs::path& destination) {
    const auto read_link = [](int dir, const std::string& entry) -> std::optional<std::string> {
      char target[4096];
      const ssize_t n = ::readlinkat(dir, entry.c_str(), target, sizeof target);
      if (n < 0 || static_cast<size_t>(n) >= sizeof target) return std::nullopt;
      return std::string(target, static_cast<size_t>(n));
    };
    const auto wanted = read_link(src_dir, name);
    if (!wanted) return;
    if (read_link(dst_dir, name) == wanted) return;
    const std::string partial = partial_name(name);
    ::unlinkat(dst_dir, partial.c_str(), 0);  // our own left-over, never a final name
    if (::symlinkat(wanted->c_str(), dst_dir, partial.c_str()) != 0 ||
        ::renameat(dst_dir, partial.c_str(), dst_dir, name.c_str()) != 0) {
      problem("cannot link " + (destination / name).string() + ": " + std::strerror(errno));
      ::unlinkat(dst_dir, partial.c_str(), 0);
      return;
    }
    (void)source;
    ++stats_.copied;
  }

  const SyncObserver& observer_;
  PassStats& stats_;
  SteadyClock::time_point started_;
  SteadyClock::time_point last_report_;
};

bool is_session_name(std::string_view name) {
  return name.size() > 8 && name.starts_with("session_") && name[8] >= '0' && name[8] <= '9';
}

}  // namespace

PassStats mirror_folder(const fs::path& source, const fs::path& destination,
                        const SyncObserver& observer) {
  PassStats stats;
  Mirror mirror(observer, stats);
  mirror.folder(source, destination);
  mirror.finish();
  return stats;
}

PassStats sync_pass(const SyncSettings& settings, const SyncObserver& observer) {
  PassStats stats;
  std::error_code ec;
  stats.saw_ended = fs::exists(settings.log_dir / kEndedFile, ec);
  Mirror mirror(observer, stats);
  fs::path target = settings.log_dir / "ray";
  if (!settings.node.empty()) target /= settings.node;
  std::vector<std::string> sessions;
  for (const auto& entry : fs::directory_iterator(settings.source, ec)) {
    const std::string name = entry.path().filename().string();
    // session_latest is only a link to one of these.
    if (is_session_name(name) && entry.is_directory(ec) && !entry.is_symlink(ec)) {
      sessions.push_back(name);
    }
  }
  std::sort(sessions.begin(), sessions.end());
  for (const std::string& session : sessions) {
    ++stats.sessions;
    const fs::path logs = settings.source / session / "logs";
    if (!fs::is_directory(logs, ec)) continue;
    mirror.folder(logs, target / session / "logs");
  }
  mirror.finish();
  return stats;
}

PassStats sync_loop(const SyncSettings& settings, const SyncObserver& observer) {
  for (;;) {
    const auto began = SteadyClock::now();
    PassStats stats = sync_pass(settings, observer);
    if (stats.saw_ended || settings.every.count() == 0) return stats;
    const auto next = began + settings.every;
    std::this_thread::sleep_until(next);
  }
}

}  // namespace nsel
