#include "sync/copier.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "nsel/core/terminal_text.hpp"

namespace nsel::sync_detail {
namespace fs = std::filesystem;

namespace {

// A path inside a message: escaped and cut as the terminal shows names (the docs' 512 bytes), so
// that one name past PATH_MAX never makes a 4 KiB line.
std::string named(const fs::path& path) {
  return terminal_text(path.string(), kNameCutBytes);
}

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

// Below LOG_DIR every folder is nsel's: a link or a file found in place of one was planted, and
// is never followed.
constexpr const char* kNotAFolder =
    "not a folder (a link or a file is in its place; links are never followed at the "
    "destination)";

// Opens `destination`, made folder by folder below `base` (LOG_DIR, the user's, which may be a
// link) without following any link below it. Returns -1 with `failure` set.
int open_destination(const fs::path& base, const fs::path& destination, std::string& failure) {
  std::error_code ec;
  if (base.empty()) {
    fs::create_directories(destination, ec);
    const int fd = ::open(destination.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) failure = std::strerror(errno);
    return fd;
  }
  fs::create_directories(base, ec);
  int fd = ::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    failure = std::strerror(errno);
    return -1;
  }
  for (const fs::path& part : destination.lexically_relative(base)) {
    if (part.empty() || part == ".") continue;
    if (::mkdirat(fd, part.c_str(), 0777) != 0 && errno != EEXIST) {
      failure = std::strerror(errno);
      ::close(fd);
      return -1;
    }
    const int next = ::openat(fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int error = errno;
    ::close(fd);
    if (next < 0) {
      failure = error == ELOOP || error == ENOTDIR ? kNotAFolder : std::strerror(error);
      return -1;
    }
    fd = next;
  }
  return fd;
}

// Two syncs into one folder (an --every loop and a final sync, two nodes under one name) take
// turns there, by an flock on the folder: both would write the same temporary names, and one
// would remove or rename the other's half-written copy. A folder where flock does not work (some
// network file systems) is copied into without turns, as before.
constexpr std::chrono::seconds kFolderTurnWait{120};

bool take_folder_turn(int folder) {
  const auto deadline = std::chrono::steady_clock::now() + kFolderTurnWait;
  while (::flock(folder, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::string partial_name(const std::string& name) {
  std::string partial = "." + name + std::string(kPartialSuffix);
  if (partial.size() > 250) {
    partial = "." + std::to_string(std::hash<std::string>{}(name)) + std::string(kPartialSuffix);
  }
  return partial;
}

}  // namespace

void Mirror::add_root(MirrorRoot& root, const fs::path& source) {
  std::error_code ec;
  if (!fs::is_directory(source, ec)) return;  // a session removed meanwhile
  std::string failure;
  UniqueFd dst(open_destination(root.base, root.destination, failure));
  if (dst.fd < 0) {
    problem("cannot create " + named(root.destination) + ": " + failure);
    return;
  }
  SyncState::prepare(dst.fd);
  roots_.push_back(&root);
  push({&root, source, root.destination, "", std::nullopt});
}

void Mirror::add_changed(MirrorRoot& root, const WatchedFolder& folder,
                         std::vector<std::string> names) {
  if (std::find(roots_.begin(), roots_.end(), &root) == roots_.end()) roots_.push_back(&root);
  push({&root, folder.source, folder.destination, folder.relative, std::move(names)});
}

void Mirror::run(size_t threads, SteadyClock::time_point started, bool save_state) {
  if (tasks_.empty()) return;  // a watched pass with nothing changed: no threads to start
  std::vector<std::thread> workers;
  for (size_t i = 0; i < threads; ++i) workers.emplace_back([this] { work(); });
  {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!idle_.wait_for(lock, observer_.progress_interval, [&] { return outstanding_ == 0; })) {
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
    root->state.save(root->destination);
  }
}

void Mirror::push(FolderTask task) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
    ++outstanding_;
  }
  ready_.notify_one();
}

void Mirror::work() {
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

void Mirror::problem(const std::string& message) {
  ++stats_.failed;
  if (!observer_.problem) return;
  const std::lock_guard<std::mutex> lock(problem_mutex_);
  observer_.problem(message);
}

void Mirror::visit(const FolderTask& task) {
  // Watched before it is listed: whatever changes after the listing raises an event.
  if (watch_ != nullptr && !task.only) {
    watch_->add({task.root->number, task.source, task.destination, task.relative});
  }
  UniqueFd src(::open(task.source.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (src.fd < 0) return;  // removed meanwhile
  UniqueFd dst(::open(task.destination.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dst.fd < 0) {
    problem("cannot open " + named(task.destination) + ": " +
            (errno == ELOOP || errno == ENOTDIR ? kNotAFolder : std::strerror(errno)));
    return;
  }
  if (!take_folder_turn(dst.fd)) {
    problem("another sync has been copying into " + named(task.destination) + " for " +
            std::to_string(kFolderTurnWait.count()) + " s; its files are left to the next pass");
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
    state.load(task.destination);
    task.root->loaded = true;
  }
  const SyncState::Folder* known = state.folder(task.relative);
  SyncState::Batch batch;
  batch.folder = task.relative;
  struct stat dst_folder {};
  const bool trusted =
      ::fstat(dst.fd, &dst_folder) == 0 && known != nullptr && known->times == times_of(dst_folder);
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
      if (::mkdirat(dst.fd, name.c_str(), (st.st_mode & 01777) | 0700) == 0) {
        changed = true;
      } else if (errno != EEXIST) {
        problem("cannot create " + named(task.destination / name) + ": " + std::strerror(errno));
        continue;
      } else if (struct stat there{};
                 ::fstatat(dst.fd, name.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0 ||
                 !S_ISDIR(there.st_mode)) {
        problem("cannot copy into " + named(task.destination / name) + ": " + kNotAFolder);
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

bool Mirror::file(int src_dir, int dst_dir, const std::string& name, const struct stat& src_st,
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
    if (!known) batch.files.emplace_back(name, source_times);
    return false;
  }
  if (const auto copied = copy(src_dir, dst_dir, name, task.source, task.destination)) {
    batch.files.emplace_back(name, *copied);  // the state leaves out a name with a newline
    return true;
  }
  return false;
}

std::optional<SyncState::Times> Mirror::copy(int src_dir, int dst_dir, const std::string& name,
                                             const fs::path& source, const fs::path& destination) {
  UniqueFd in(::openat(src_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (in.fd < 0) {
    if (errno != ENOENT) {
      problem("cannot read " + named(source / name) + ": " + std::strerror(errno));
    }
    return std::nullopt;
  }
  struct stat before {};
  if (::fstat(in.fd, &before) != 0) return std::nullopt;
  const std::string partial = partial_name(name);
  // Made anew, never opened through what is there: a link planted at the temporary name would
  // otherwise have the copy written wherever it points. What is there is only ours to remove (a
  // pass killed midway, or a planted link: unlinking removes the link, not its target).
  constexpr int kCreate = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd out(::openat(dst_dir, partial.c_str(), kCreate, 0600));
  if (out.fd < 0 && errno == EEXIST && ::unlinkat(dst_dir, partial.c_str(), 0) == 0) {
    out.fd = ::openat(dst_dir, partial.c_str(), kCreate, 0600);
  }
  if (out.fd < 0) {
    problem("cannot write " + named(destination / partial) + ": " + std::strerror(errno));
    return std::nullopt;
  }
  bool kernel_copy = true;
  std::vector<char> buffer;
  for (;;) {
    ssize_t n = -1;
    if (kernel_copy) {
      n = ::copy_file_range(in.fd, nullptr, out.fd, nullptr, 8u << 20, 0);
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
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
      problem("cannot copy " + named(source / name) + ": " + std::strerror(errno));
      ::unlinkat(dst_dir, partial.c_str(), 0);
      return std::nullopt;
    }
    stats_.bytes_copied += static_cast<std::uint64_t>(n);
  }
  // The copy carries the time taken before copying: if the file changed meanwhile, its new
  // time differs from the copy's and the next pass copies it again.
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ::fchmod(out.fd, before.st_mode & 01777);  // never set-user-ID or set-group-ID: the copy is ours
  const bool finished = ::futimens(out.fd, times) == 0;
  const int closed = ::close(out.fd);
  out.fd = -1;
  if (!finished || closed != 0 ||
      ::renameat(dst_dir, partial.c_str(), dst_dir, name.c_str()) != 0) {
    problem("cannot finish " + named(destination / name) + ": " + std::strerror(errno));
    ::unlinkat(dst_dir, partial.c_str(), 0);
    return std::nullopt;
  }
  ++stats_.copied;
  return times_of(before);
}

bool Mirror::link(int src_dir, int dst_dir, const std::string& name, const fs::path& destination) {
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
    problem("cannot link " + named(destination / name) + ": " + std::strerror(errno));
    ::unlinkat(dst_dir, partial.c_str(), 0);
    return false;
  }
  ++stats_.copied;
  return true;
}

}  // namespace nsel::sync_detail
