#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/sync/mirror.hpp"
#include "sync/folder_watch.hpp"

namespace nsel {
namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;
using sync_detail::FolderChanges;
using sync_detail::FolderWatch;
using sync_detail::WatchedFolder;

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

// What the previous pass saw, kept at the destination (".nsel-sync/state" in the mirrored
// folder) so that a pass over unchanged files need not look at the copies again: a file whose
// size and time match the entry, in a destination folder whose own time shows no entry added,
// removed or renamed since, is known to be copied. Anything else is checked at the destination
// as usual, so a missing or stale state only costs time.
class SyncState {
 public:
  struct Times {
    long long size = 0;
    long long seconds = 0;
    long long nanoseconds = 0;
    bool operator==(const Times&) const = default;
  };
  // One folder below the mirrored one: its copy's time and its files' sizes and times, kept
  // together so that a visit looks its files up in a small table of its own.
  struct Folder {
    std::optional<Times> times;
    std::unordered_map<std::string, Times> files;
  };

  // In a folder of its own, so that replacing it never changes the mirrored folder's time.
  static constexpr const char* kFolder = ".nsel-sync";
  static constexpr const char* kFileName = ".nsel-sync/state";
  static constexpr const char* kTemporary = ".nsel-sync/state.nsel-partial";

  static void prepare(int dir_fd) { ::mkdirat(dir_fd, kFolder, 0755); }

  void load(int dir_fd) {
    UniqueFd fd(::openat(dir_fd, kFileName, O_RDONLY | O_CLOEXEC));
    if (fd.fd < 0) return;
    std::string text;
    char buffer[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd.fd, buffer, sizeof buffer);
      if (n <= 0) break;
      text.append(buffer, static_cast<size_t>(n));
    }
    constexpr std::string_view header = "nsel-sync-state 1\n";
    if (!text.starts_with(header)) return;
    size_t at = header.size();
    while (at < text.size()) {
      const size_t end = text.find('\n', at);
      if (end == std::string::npos) break;  // a cut line: ignore it
      parse_line(std::string_view(text).substr(at, end - at));
      at = end + 1;
    }
  }

  // Takes in what the pass found. Entries of files gone from the source stay: they are never
  // looked up again unless the same file comes back.
  void take_in() {
    if (updates_.empty()) return;
    for (Batch& batch : updates_) {
      Folder& folder = folders_[batch.folder];
      if (batch.folder_times) folder.times = batch.folder_times;
      for (auto& [name, times] : batch.files) folder.files[name] = times;
    }
    updates_.clear();
    unsaved_ = true;
  }

  // Takes in what the pass found and writes the whole state when something changed since it was
  // last written, under a temporary name.
  void save(int dir_fd) {
    take_in();
    if (!unsaved_) return;
    unsaved_ = false;
    std::string text = "nsel-sync-state 1\n";
    for (const auto& [path, folder] : folders_) {
      if (folder.times) append_line(text, 'D', *folder.times, path, "");
      for (const auto& [name, times] : folder.files) append_line(text, 'F', times, path, name);
    }
    const std::string temporary = kTemporary;
    UniqueFd fd(
        ::openat(dir_fd, temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.fd < 0) return;
    size_t written = 0;
    while (written < text.size()) {
      const ssize_t n = ::write(fd.fd, text.data() + written, text.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      written += static_cast<size_t>(n);
    }
    if (::close(fd.fd) == 0) ::renameat(dir_fd, temporary.c_str(), dir_fd, kFileName);
    fd.fd = -1;
  }

  // What the last pass knew of the folder `relative` ("" or ending in '/'); nullptr if nothing.
  // The state is not changed during a pass, so every thread may read it.
  const Folder* folder(const std::string& relative) const {
    const auto found = folders_.find(relative);
    return found == folders_.end() ? nullptr : &found->second;
  }

  // What one folder's visit changed; merged when the visit ends, applied when saved.
  struct Batch {
    std::string folder;
    std::optional<Times> folder_times;
    std::vector<std::pair<std::string, Times>> files;
  };
  void merge(Batch& batch) {
    if (!batch.folder_times && batch.files.empty()) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    updates_.push_back(std::move(batch));
  }

 private:
  void parse_line(std::string_view line) {
    // "<F|D> <size> <seconds> <nanoseconds> <path>"
    if (line.size() < 2 || line[1] != ' ') return;
    const char kind = line[0];
    Times times;
    std::string_view rest = line.substr(2);
    for (long long* field : {&times.size, &times.seconds, &times.nanoseconds}) {
      const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), *field);
      if (ec != std::errc() || end == rest.data() + rest.size() || *end != ' ') return;
      rest = rest.substr(static_cast<size_t>(end - rest.data()) + 1);
    }
    if (kind == 'D') {
      folders_[std::string(rest)].times = times;
    } else if (kind == 'F') {
      const size_t slash = rest.rfind('/');
      const size_t name_at = slash == std::string_view::npos ? 0 : slash + 1;
      folders_[std::string(rest.substr(0, name_at))].files.emplace(rest.substr(name_at), times);
    }
  }

  static void append_line(std::string& text, char kind, const Times& times,
                          const std::string& folder, const std::string& name) {
    text += kind;
    text += ' ';
    text += std::to_string(times.size);
    text += ' ';
    text += std::to_string(times.seconds);
    text += ' ';
    text += std::to_string(times.nanoseconds);
    text += ' ';
    text += folder;
    text += name;
    text += '\n';
  }

  std::unordered_map<std::string, Folder> folders_;
  std::vector<Batch> updates_;
  bool unsaved_ = false;
  std::mutex mutex_;
};

SyncState::Times times_of(const struct stat& st) {
  return {static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
          static_cast<long long>(st.st_mtim.tv_nsec)};
}

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
  fs::path destination;
  SyncState state;
  bool loaded = false;   // its state was read from the destination
  bool watched = false;  // every folder in it was watched when last visited in full
};

// One folder to visit: every file in it is compared (and copied), every subfolder becomes a
// task of its own, so that a pass keeps several file-system requests in flight at once.
struct FolderTask {
  MirrorRoot* root = nullptr;
  fs::path source;
  fs::path destination;
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
  void add_root(MirrorRoot& root, const fs::path& source) {
    std::error_code ec;
    if (!fs::is_directory(source, ec)) return;  // a session removed meanwhile
    fs::create_directories(root.destination, ec);
    UniqueFd dst(::open(root.destination.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dst.fd < 0) {
      problem("cannot create " + root.destination.string() + ": " + std::strerror(errno));
      return;
    }
    SyncState::prepare(dst.fd);
    roots_.push_back(&root);
    push({&root, source, root.destination, "", std::nullopt});
  }

  // Looks again at the entries `names` of one folder of `root` (visited in full before).
  void add_changed(MirrorRoot& root, const WatchedFolder& folder, std::vector<std::string> names) {
    if (std::find(roots_.begin(), roots_.end(), &root) == roots_.end()) roots_.push_back(&root);
    push({&root, folder.source, folder.destination, folder.relative, std::move(names)});
  }

  // Visits every folder with up to `threads` threads, reporting progress from this one.
  // `save_state` false: what the pass found is kept in memory only, and written by a later
  // pass (a state older than the copies only costs time, never a copy).
  void run(size_t threads, SteadyClock::time_point started, bool save_state = true) {
    if (tasks_.empty()) return;  // a watched pass with nothing changed: no threads to start
    std::vector<std::thread> workers;
    for (size_t i = 0; i < threads; ++i) workers.emplace_back([this] { work(); });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      while (
          !idle_.wait_for(lock, observer_.progress_interval, [&] { return outstanding_ == 0; })) {
        if (!observer_.progress) continue;
        PassStats now;
        stats_.add_to(now);
        now.sessions = roots_.size();
        now.elapsed = SteadyClock::now() - started;
        lock.unlock();
        observer_.progress(now, false);
        lock.lock();
      }
      finished_ = true;
    }
    ready_.notify_all();
    for (std::thread& worker : workers) worker.join();
    for (MirrorRoot* root : roots_) {
      if (!save_state) {
        root->state.take_in();
        continue;
      }
      UniqueFd dst(::open(root->destination.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (dst.fd < 0) continue;
      root->state.save(dst.fd);
    }
  }

  size_t roots() const { return roots_.size(); }

 private:
  void push(FolderTask task) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
      ++outstanding_;
    }
    ready_.notify_one();
  }

  void work() {
    for (;;) {
      FolderTask task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return finished_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      visit(task);
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (--outstanding_ == 0) idle_.notify_all();
      }
    }
  }

  void problem(const std::string& message) {
    ++stats_.failed;
    if (!observer_.problem) return;
    const std::lock_guard<std::mutex> lock(problem_mutex_);
    observer_.problem(message);
  }

  void visit(const FolderTask& task) {
    // Watched before it is listed: whatever changes after the listing raises an event.
    if (watch_ != nullptr && !task.only) {
      watch_->add({task.root->number, task.source, task.destination, task.relative});
    }
    UniqueFd src(::open(task.source.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (src.fd < 0) return;  // removed meanwhile
    UniqueFd dst(::open(task.destination.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dst.fd < 0) {
      problem("cannot open " + task.destination.string() + ": " + std::strerror(errno));
      return;
    }
    ++stats_.folders;
    std::vector<std::pair<std::string, unsigned char>> entries;
    if (task.only) {
      for (const std::string& name : *task.only) entries.emplace_back(name, DT_UNKNOWN);
    } else {
      DIR* listing = ::fdopendir(::dup(src.fd));
      if (listing == nullptr) return;
      while (const dirent* d = ::readdir(listing)) {
        const std::string_view name = d->d_name;
        if (name == "." || name == "..") continue;
        entries.emplace_back(std::string(name), d->d_type);
      }
      ::closedir(listing);
    }
    SyncState& state = task.root->state;
    // The mirrored folder's first visit reads its state (in parallel with other sessions'); its
    // subfolders are queued only by this visit, so none is visited before.
    if (task.relative.empty() && !task.root->loaded) {
      state.load(dst.fd);
      task.root->loaded = true;
    }
    const SyncState::Folder* known = state.folder(task.relative);
    SyncState::Batch batch;
    batch.folder = task.relative;
    struct stat dst_folder {};
    const bool trusted = ::fstat(dst.fd, &dst_folder) == 0 && known != nullptr &&
                         known->times == times_of(dst_folder);
    bool changed = false;
    for (auto& [name, type] : entries) {
      struct stat st {};
      if (type == DT_UNKNOWN || type == DT_REG || type == DT_DIR) {
        if (::fstatat(src.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
        type = S_ISREG(st.st_mode)   ? DT_REG
               : S_ISDIR(st.st_mode) ? DT_DIR
               : S_ISLNK(st.st_mode) ? DT_LNK
                                     : DT_UNKNOWN;
      }
      if (type == DT_DIR) {
        if (::mkdirat(dst.fd, name.c_str(), (st.st_mode & 07777) | 0700) == 0) {
          changed = true;
        } else if (errno != EEXIST) {
          problem("cannot create " + (task.destination / name).string() + ": " +
                  std::strerror(errno));
          continue;
        }
        push({task.root, task.source / name, task.destination / name, task.relative + name + "/",
              std::nullopt});
      } else if (type == DT_REG) {
        if (name.ends_with(kPartialSuffix)) continue;  // never copy a copy in progress
        ++stats_.files;
        changed |= file(src.fd, dst.fd, name, st, task, known, trusted, batch);
      } else if (type == DT_LNK) {
        ++stats_.files;
        changed |= link(src.fd, dst.fd, name, task.destination);
      }
    }
    if (changed) ::fstat(dst.fd, &dst_folder);
    if (known == nullptr || known->times != times_of(dst_folder)) {
      batch.folder_times = times_of(dst_folder);
    }
    state.merge(batch);
  }

  // Returns whether the destination folder changed.
  bool file(int src_dir, int dst_dir, const std::string& name, const struct stat& src_st,
            const FolderTask& task, const SyncState::Folder* known_folder, bool trusted,
            SyncState::Batch& batch) {
    const SyncState::Times source_times = times_of(src_st);
    bool known = false;
    if (known_folder != nullptr) {
      const auto found = known_folder->files.find(name);
      known = found != known_folder->files.end() && found->second == source_times;
    }
    if (known && trusted) return false;
    struct stat dst_st {};
    if (::fstatat(dst_dir, name.c_str(), &dst_st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(dst_st.st_mode) && dst_st.st_size == src_st.st_size &&
        same_time(src_st.st_mtim, dst_st.st_mtim)) {
      if (!known && name.find('\n') == std::string::npos)
        batch.files.emplace_back(name, source_times);
      return false;
    }
    if (const auto copied = copy(src_dir, dst_dir, name, task.source, task.destination)) {
      if (name.find('\n') == std::string::npos) batch.files.emplace_back(name, *copied);
      return true;
    }
    return false;
  }

  // Streams the file into ".<name>.nsel-partial", then renames it over <name>. Returns the
  // source's size and time as the copy carries them, or nullopt when nothing was renamed.
  std::optional<SyncState::Times> copy(int src_dir, int dst_dir, const std::string& name,
                                       const fs::path& source, const fs::path& destination) {
    UniqueFd in(::openat(src_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (in.fd < 0) {
      if (errno != ENOENT) {
        problem("cannot read " + (source / name).string() + ": " + std::strerror(errno));
      }
      return std::nullopt;
    }
    struct stat before {};
    if (::fstat(in.fd, &before) != 0) return std::nullopt;
    const std::string partial = partial_name(name);
    UniqueFd out(
        ::openat(dst_dir, partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (out.fd < 0) {
      problem("cannot write " + (destination / partial).string() + ": " + std::strerror(errno));
      return std::nullopt;
    }
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
        for (ssize_t done = 0; n > 0 && done < n;) {
          const ssize_t w = ::write(out.fd, buffer.data() + done, static_cast<size_t>(n - done));
          if (w < 0 && errno == EINTR) continue;
          if (w < 0)
            n = -1;
          else
            done += w;
        }
      }
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        problem("cannot copy " + (source / name).string() + ": " + std::strerror(errno));
        ::unlinkat(dst_dir, partial.c_str(), 0);
        return std::nullopt;
      }
      stats_.bytes_copied += static_cast<std::uint64_t>(n);
    }
    // The copy carries the time taken before copying: if the file changed meanwhile, its new
    // time differs from the copy's and the next pass copies it again.
    const timespec times[2] = {before.st_atim, before.st_mtim};
    ::fchmod(out.fd, before.st_mode & 07777);
    const bool finished = ::futimens(out.fd, times) == 0;
    const int closed = ::close(out.fd);
    out.fd = -1;
    if (!finished || closed != 0 ||
        ::renameat(dst_dir, partial.c_str(), dst_dir, name.c_str()) != 0) {
      problem("cannot finish " + (destination / name).string() + ": " + std::strerror(errno));
      ::unlinkat(dst_dir, partial.c_str(), 0);
      return std::nullopt;
    }
    ++stats_.copied;
    return times_of(before);
  }

  // Links are recreated as links (never followed). Returns whether one was (re)made.
  bool link(int src_dir, int dst_dir, const std::string& name, const fs::path& destination) {
    const auto read_link = [](int dir, const std::string& entry) -> std::optional<std::string> {
      char target[4096];
      const ssize_t n = ::readlinkat(dir, entry.c_str(), target, sizeof target);
      if (n < 0 || static_cast<size_t>(n) >= sizeof target) return std::nullopt;
      return std::string(target, static_cast<size_t>(n));
    };
    const auto wanted = read_link(src_dir, name);
    if (!wanted || read_link(dst_dir, name) == wanted) return false;
    const std::string partial = partial_name(name);
    ::unlinkat(dst_dir, partial.c_str(), 0);  // our own left-over, never a final name
    if (::symlinkat(wanted->c_str(), dst_dir, partial.c_str()) != 0 ||
        ::renameat(dst_dir, partial.c_str(), dst_dir, name.c_str()) != 0) {
      problem("cannot link " + (destination / name).string() + ": " + std::strerror(errno));
      ::unlinkat(dst_dir, partial.c_str(), 0);
      return false;
    }
    ++stats_.copied;
    return true;
  }

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

bool is_session_name(std::string_view name) {
  return name.size() > 8 && name.starts_with("session_") && name[8] >= '0' && name[8] <= '9';
}

struct MirrorJob {
  fs::path source;
  fs::path destination;
};

// Folders are visited by several threads: a pass mostly waits for the file system (a shared
// one above all), so more requests in flight finish it sooner even on few cores.
constexpr size_t kMirrorThreads = 8;

PassStats run_jobs(const std::vector<MirrorJob>& jobs, const SyncObserver& observer) {
  const auto started = SteadyClock::now();
  std::vector<std::unique_ptr<MirrorRoot>> roots;
  Counters counters;
  Mirror mirror(observer, counters);
  for (const MirrorJob& job : jobs) {
    roots.push_back(std::make_unique<MirrorRoot>());
    roots.back()->destination = job.destination;
    mirror.add_root(*roots.back(), job.source);
  }
  mirror.run(kMirrorThreads, started);
  PassStats stats;
  counters.add_to(stats);
  stats.sessions = mirror.roots();
  stats.elapsed = SteadyClock::now() - started;
  return stats;
}

// Each session's logs folder now at the source, and where it goes.
std::vector<MirrorJob> session_jobs(const SyncSettings& settings) {
  std::error_code ec;
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
  std::vector<MirrorJob> jobs;
  for (const std::string& session : sessions) {
    const fs::path logs = settings.source / session / "logs";
    if (fs::is_directory(logs, ec)) jobs.push_back({logs, target / session / "logs"});
  }
  return jobs;
}

bool ended(const SyncSettings& settings) {
  std::error_code ec;
  return fs::exists(settings.log_dir / kEndedFile, ec);
}

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

PassStats mirror_folder(const fs::path& source, const fs::path& destination,
                        const SyncObserver& observer) {
  PassStats stats = run_jobs({{source, destination}}, observer);
  if (observer.progress) observer.progress(stats, true);
  return stats;
}

PassStats sync_pass(const SyncSettings& settings, const SyncObserver& observer) {
  const bool saw_ended = ended(settings);
  PassStats stats = run_jobs(session_jobs(settings), observer);
  stats.saw_ended = saw_ended;
  stats.number = 1;
  if (observer.progress) observer.progress(stats, true);
  return stats;
}

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
