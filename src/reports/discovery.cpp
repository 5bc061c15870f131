#include "nsel/reports/discovery.hpp"
#include "nsel/reports/recovery.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/reports/layout.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/proc.hpp"
#include "reports/identify.hpp"

namespace nsel {
namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;

std::string_view to_string(ReportState state) {
  switch (state) {
    case ReportState::complete:
      return "complete";
    case ReportState::empty:
      return "empty";
    case ReportState::writing:
      return "writing";
    case ReportState::qdstrm:
      return "qdstrm";
    case ReportState::running:
      return "running";
    case ReportState::missing:
      return "missing";
  }
  return "complete";
}

std::vector<fs::path> default_report_roots() {
  return {"/tmp/ray", temporary_folder_setting() / "nsel-demo"};
}

namespace {

// How long after its last change a file still counts as being written.
constexpr std::chrono::seconds kWritingQuietPeriod{30};
// A .nsys-rep smaller than this holds no profile: even an empty session's report is ~100 KiB.
constexpr std::uintmax_t kEmptyReportBytes = 4096;

constexpr std::string_view kReportSuffix = ".nsys-rep";
constexpr std::string_view kQdstrmSuffix = ".qdstrm";
using reports_detail::kHeadNode;

struct Context {
  std::string root;
  std::string job;
  std::string node;
  std::string session;
  bool in_ray_folder = false;  // the folder is "<job>-logs/ray": its plain children are nodes
};

struct FileInfo {
  std::uintmax_t bytes = 0;
  Clock::time_point modified{};
};

struct Entry {
  std::string name;
  bool directory = false;
  bool symlink = false;
  bool regular = false;
};

// readdir with d_type: no stat for the common case. `error`: the system's errno when the folder
// cannot be opened (0 when it was read).
std::vector<Entry> list_folder(const fs::path& folder, int& error) {
  std::vector<Entry> entries;
  error = 0;
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) {
    error = errno;
    return entries;
  }
  while (const dirent* d = ::readdir(dir)) {
    const std::string_view name = d->d_name;
    if (name == "." || name == "..") continue;
    Entry entry{std::string(name)};
    unsigned char type = d->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (::fstatat(::dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = S_ISDIR(st.st_mode)   ? DT_DIR
             : S_ISLNK(st.st_mode) ? DT_LNK
             : S_ISREG(st.st_mode) ? DT_REG
                                   : DT_UNKNOWN;
    }
    entry.directory = type == DT_DIR;
    entry.symlink = type == DT_LNK;
    entry.regular = type == DT_REG;
    entries.push_back(std::move(entry));
  }
  ::closedir(dir);
  return entries;
}

bool is_vllm_generation_worker(std::string_view worker) {
  return worker.starts_with("vllm") && worker.find("generation_worker") != std::string_view::npos;
}

bool process_alive(long long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string seconds_ago(Clock::time_point then, Clock::time_point now) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - then).count();
  return std::to_string(std::max<long long>(seconds, 0)) + " s ago";
}

class Walker {
 public:
  Walker(const DiscoveryOptions& options, Discovery& out) : options_(options), out_(out) {}

  void walk(const fs::path& folder, Context context, int depth) {
    if (depth > options_.max_depth) return;
    int error = 0;
    const std::vector<Entry> entries = list_folder(folder, error);
    if (error != 0) {
      note_unreadable(context, folder, error);
      return;
    }
    std::vector<std::string> sessions;
    const Entry* latest = nullptr;
    bool has_report_files = false;
    for (const Entry& entry : entries) {
      if (entry.name == "session_latest") {
        latest = &entry;
      } else if (is_ray_session_name(entry.name) && (entry.directory || entry.symlink)) {
        sessions.push_back(entry.name);
      } else if ((entry.regular || entry.symlink) &&
                 (entry.name.ends_with(kReportSuffix) || entry.name.ends_with(kQdstrmSuffix) ||
                  entry.name.ends_with(kManifestSuffix))) {
        has_report_files = true;
      }
    }
    if (has_report_files) scan_reports(folder, context);
    std::sort(sessions.begin(), sessions.end());
    // Sessions right under "<job>-logs/ray" are the head node's (other nodes have a folder).
    Context session_context = context;
    if (context.in_ray_folder && session_context.node.empty()) session_context.node = kHeadNode;
    for (const std::string& session : sessions) {
      scan_session(folder / session, session, session_context);
    }
    if (latest != nullptr) check_latest(folder, *latest, sessions, session_context);

    for (const Entry& entry : entries) {
      // Sessions are done above; links to folders are not followed, so that no folder is
      // searched twice and no loop is possible (as `nsel report` walks). Hidden folders are
      // searched (a worker may be named so), but for nsel sync's state.
      if (!entry.directory || entry.name == reports_detail::kSyncStateFolder ||
          is_ray_session_name(entry.name) || entry.name == "session_latest") {
        continue;
      }
      Context child = context;
      child.in_ray_folder = false;
      if (context.in_ray_folder) {
        child.node = entry.name;
      } else if (entry.name.size() > 5 && entry.name.ends_with("-logs")) {
        child.job = entry.name.substr(0, entry.name.size() - 5);
      }
      if (entry.name == "ray" && !child.job.empty() && context.node.empty()) {
        child.in_ray_folder = true;
      }
      walk(folder / entry.name, child, depth + 1);
    }
  }

  void scan_session(const fs::path& session_folder, const std::string& name, Context context) {
    ++out_.sessions;
    out_.session_folders.push_back({context.root, session_folder, name});
    context.session = name;
    const fs::path nsight = session_folder / "logs" / "nsight";
    scan_reports(nsight, context);
  }

 private:
  void note(const Context& context, const fs::path& path, std::string kind, std::string message) {
    out_.notes.push_back({context.root, path.string(), std::move(kind), std::move(message)});
  }

  // A folder that may hold reports but cannot be read is told, never passed over: its reports
  // would be a silent loss. One that does not exist (a session without logs/nsight) is not.
  void note_unreadable(const Context& context, const fs::path& folder, int error) {
    if (error == ENOENT || error == ENOTDIR) return;
    note(context, folder, std::string(kUnreadableFolderNote),
         "cannot read " + quote(folder.string()) + ": " + std::strerror(error) +
             "; any reports in it are not counted");
  }

  void check_latest(const fs::path& folder, const Entry& latest,
                    const std::vector<std::string>& sessions, const Context& context) {
    const fs::path link = folder / "session_latest";
    const std::string newest = sessions.empty() ? std::string() : sessions.back();
    if (latest.symlink) {
      std::error_code ec;
      const fs::path target = fs::read_symlink(link, ec);
      const std::string target_name = target.filename().string();
      if (ec || !fs::is_directory(link, ec)) {
        note(context, link, "dangling_session_latest",
             "session_latest points to " + quote(target.string()) + ", which does not exist");
        return;
      }
      const bool listed =
          std::find(sessions.begin(), sessions.end(), target_name) != sessions.end() &&
          fs::equivalent(link, folder / target_name, ec);
      if (!listed) {
        // Points outside this folder: search it once, under its own name.
        scan_session(link, target_name, context);
      } else if (target_name != newest) {
        note(context, link, "stale_session_latest",
             "session_latest points to " + target_name + ", not to the newest session " + newest +
                 "; both were searched");
      }
      return;
    }
    if (latest.directory) {
      // A copy that followed the link: its reports are those of some session already listed.
      const size_t before = out_.reports.size();
      scan_session(link, "session_latest", context);
      std::set<std::string> known;
      for (size_t i = 0; i < before; ++i) {
        if (out_.reports[i].root == context.root && out_.reports[i].node == context.node) {
          known.insert(out_.reports[i].path.filename().string());
        }
      }
      const auto duplicate = [&](const FoundReport& r) {
        return known.count(r.path.filename().string()) > 0;
      };
      const auto first_new = out_.reports.begin() + static_cast<std::ptrdiff_t>(before);
      const auto removed = std::count_if(first_new, out_.reports.end(), duplicate);
      out_.reports.erase(std::remove_if(first_new, out_.reports.end(), duplicate),
                         out_.reports.end());
      if (removed > 0) {
        note(context, link, "copied_session_latest",
             "session_latest is a folder (a copy of a session); " + std::to_string(removed) +
                 " report(s) already found in a session were counted once");
      }
    }
  }

  // Follows links: a linked report is a report (found once, see discover_reports). `error`:
  // errno when the file cannot be looked at (not for a dangling link).
  std::optional<FileInfo> file_info(int dir_fd, const std::string& name, int& error) {
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, 0) != 0) {
      if (errno != ENOENT) error = errno;
      return std::nullopt;
    }
    if (!S_ISREG(st.st_mode)) return std::nullopt;
    FileInfo info;
    info.bytes = static_cast<std::uintmax_t>(st.st_size);
    info.modified = Clock::time_point(std::chrono::duration_cast<Clock::duration>(
        std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
    return info;
  }

  void scan_reports(const fs::path& folder, const Context& context) {
    const int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
      note_unreadable(context, folder, errno);
      return;
    }
    std::map<std::string, FileInfo> reports;  // by stem
    std::map<std::string, FileInfo> qdstrms;
    std::map<std::string, std::pair<Manifest, fs::path>> manifests;
    std::vector<long long> worker_processes;
    int error = 0;
    const std::vector<Entry> entries = list_folder(folder, error);
    if (error != 0) note_unreadable(context, folder, error);
    int file_error = 0;  // a file that could not be looked at (a folder without search right)
    for (const Entry& entry : entries) {
      const std::string& name = entry.name;
      if (!entry.regular && !entry.symlink) {
        // A FIFO, device or socket under a name of nsel's files is never opened: said, skipped.
        if (!entry.directory && (name.ends_with(kReportSuffix) || name.ends_with(kQdstrmSuffix) ||
                                 name.ends_with(kManifestSuffix))) {
          note(context, folder / name, "special_file",
               (folder / name).string() +
                   ": is not a regular file (a FIFO, device or socket); "
                   "skipped");
        }
        continue;
      }
      if (reports_detail::is_nsel_temporary(name)) continue;
      if (name.ends_with(kReportSuffix)) {
        if (auto info = file_info(dir_fd, name, file_error)) {
          const std::string stem = name.substr(0, name.size() - kReportSuffix.size());
          reports[stem] = *info;
          if (const auto parsed = parse_report_file_name(name);
              parsed && parsed->worker == "worker_process") {
            worker_processes.push_back(parsed->pid);
          }
        }
      } else if (name.ends_with(kQdstrmSuffix)) {
        if (auto info = file_info(dir_fd, name, file_error)) {
          qdstrms[name.substr(0, name.size() - kQdstrmSuffix.size())] = *info;
        }
      } else if (name.ends_with(kManifestSuffix)) {
        read_manifest(folder / name, context, manifests);
      }
    }
    ::close(dir_fd);
    if (file_error != 0) note_unreadable(context, folder, file_error);
    std::sort(worker_processes.begin(), worker_processes.end());
    drop_superseded_pending(manifests);

    std::set<std::string> stems;
    for (const auto& [stem, info] : reports) stems.insert(stem);
    for (const auto& [stem, info] : qdstrms) stems.insert(stem);
    for (const auto& [stem, manifest] : manifests) stems.insert(stem);
    // Numbered reports of repeated windows are all described by their base's manifest.
    using reports_detail::numbered_report_base;
    std::set<std::string> described;  // manifests whose reports are numbered
    for (const std::string& stem : stems) {
      const std::string base = numbered_report_base(stem);
      if (base != stem && manifests.count(base) && (reports.count(stem) || qdstrms.count(stem))) {
        described.insert(base);
      }
    }
    for (const std::string& stem : stems) {
      const auto report = reports.find(stem);
      const auto qdstrm = qdstrms.find(stem);
      if (report == reports.end() && qdstrm == qdstrms.end() && described.count(stem)) continue;
      auto manifest = manifests.find(stem);
      if (manifest == manifests.end()) manifest = manifests.find(numbered_report_base(stem));
      FoundReport found;
      found.root = context.root;
      found.node = context.node;
      found.session = context.session;
      found.job = context.job;
      const std::string file_name = stem + std::string(kReportSuffix);
      if (const auto named = reports_detail::name_of_report(stem)) {
        found.worker = named->worker;
        found.window = named->window ? named->window->text() : "";
        found.pid = named->pid;
      }
      const Manifest* m = manifest != manifests.end() ? &manifest->second.first : nullptr;
      if (m != nullptr) {
        found.manifest = manifest->second.second;
        found.manifest_content = *m;
        reports_detail::take_manifest(found, *m);
      }
      if (report != reports.end()) {
        found.path = folder / file_name;
        found.bytes = report->second.bytes;
        found.modified = report->second.modified;
        if (qdstrm != qdstrms.end()) found.qdstrm = folder / (stem + std::string(kQdstrmSuffix));
        classify_report(found, m, qdstrm != qdstrms.end() ? &qdstrm->second : nullptr,
                        worker_processes);
      } else if (qdstrm != qdstrms.end()) {
        found.path = folder / (stem + std::string(kQdstrmSuffix));
        found.qdstrm = found.path;
        found.bytes = qdstrm->second.bytes;
        found.modified = qdstrm->second.modified;
        if (options_.now - found.modified < kWritingQuietPeriod ||
            (m != nullptr && m->state == kManifestRunning && alive(*m))) {
          found.state = ReportState::writing;
          found.reason = "the .qdstrm changed " + seconds_ago(found.modified, options_.now);
        } else {
          found.state = ReportState::qdstrm;
          found.reason = "nsys did not import it; 'nsel recover' turns it into a report";
        }
      } else {
        classify_manifest_only(found, *m, folder);
      }
      out_.reports.push_back(std::move(found));
    }
  }

  // A pending manifest whose launch (host, nsel pid, start time, worker) also left a manifest
  // under its report's name is that launch's earlier state: a mirror keeps the copy it took
  // before the program's pid was known (nsel sync never deletes), which is no process of its own.
  static void drop_superseded_pending(
      std::map<std::string, std::pair<Manifest, fs::path>>& manifests) {
    std::set<std::tuple<std::string, long long, std::string, std::string>> claimed;
    for (const auto& [stem, entry] : manifests) {
      const Manifest& m = entry.first;
      if (m.pid != 0) claimed.emplace(m.host, m.nsel_pid, m.start_time, m.worker);
    }
    std::erase_if(manifests, [&](const auto& item) {
      const Manifest& m = item.second.first;
      return m.pid == 0 && claimed.count({m.host, m.nsel_pid, m.start_time, m.worker}) > 0;
    });
  }

  void read_manifest(const fs::path& path, const Context& context,
                     std::map<std::string, std::pair<Manifest, fs::path>>& manifests) {
    // Whatever is under the name (a FIFO, a link to a device, a huge file): never a hang.
    const SmallFile file = read_capped_file(path, kManifestReadCap);
    if (!file.text) {
      note(context, path, "bad_manifest",
           path.string() + ": " + file.problem + "; expected an nsel manifest (version " +
               std::to_string(kManifestVersion) + ")");
      return;
    }
    try {
      Manifest m = parse_manifest(*file.text, path.string());
      // The manifest's own name gives the stem; a pending one (pid not yet known) has none.
      std::string name = path.filename().string();
      std::string stem = name.substr(0, name.size() - kManifestSuffix.size());
      if (m.pid == 0) stem = name;  // ".<worker>-pending-<nsel pid>.nsel.json"
      manifests[stem] = {std::move(m), path};
    } catch (const Error& e) {
      note(context, path, "bad_manifest", e.what());
    }
  }

  // Whether the process a manifest names still runs. Only this host can tell; elsewhere the
  // manifest's word is taken. A writer in another PID namespace of this host (a container that
  // shares the host's name) is looked for by its namespace and its ids there; where that
  // namespace cannot be seen into, nobody here can tell, and it may still run.
  bool alive(const Manifest& m) const { return liveness(m) != Liveness::gone; }

  enum class Liveness { alive, gone, unknown };

  Liveness liveness(const Manifest& m) const {
    if (m.host != options_.local_host) return Liveness::unknown;
    if (m.boot_id && own_boot_id_ && *m.boot_id != *own_boot_id_) return Liveness::unknown;
    if (!m.pid_namespace || !own_namespace_ || *m.pid_namespace == *own_namespace_) {
      return process_alive(m.nsel_pid) || process_alive(m.pid) ? Liveness::alive : Liveness::gone;
    }
    if (!namespaces_) namespaces_ = read_namespace_processes();
    const auto ns = namespaces_->pids.find(*m.pid_namespace);
    if (ns != namespaces_->pids.end() &&
        (ns->second.count(m.nsel_pid) > 0 || (m.pid != 0 && ns->second.count(m.pid) > 0))) {
      return Liveness::alive;
    }
    // Every process of a namespace we see into is ours to see, and from the host's own
    // namespace every namespace of the machine is: not there means ended.
    const bool sees_all = ns != namespaces_->pids.end() || *own_namespace_ == kInitialPidNamespace;
    return sees_all && namespaces_->complete ? Liveness::gone : Liveness::unknown;
  }

  // Why a writer that may still run cannot be told from here, for the reason shown.
  std::string unknown_liveness_note(const Manifest& m) const {
    if (m.host != options_.local_host) return "";
    if (m.boot_id && own_boot_id_ && *m.boot_id != *own_boot_id_) {
      return "; it ran under another boot of " + quote(m.host) +
             " (or on another machine of that name), so nobody here can tell whether it runs";
    }
    return "; it runs in another PID namespace of this host (a container), which this process "
           "cannot see into, so nobody here can tell whether it still runs";
  }

  void classify_report(FoundReport& found, const Manifest* m, const FileInfo* qdstrm,
                       const std::vector<long long>& worker_processes) const {
    const bool finished_by_manifest = m != nullptr && m->end_time.has_value();
    const bool recent = options_.now - found.modified < kWritingQuietPeriod;
    const bool qdstrm_recent =
        qdstrm != nullptr && options_.now - qdstrm->modified < kWritingQuietPeriod;
    if ((m != nullptr && m->state == kManifestRunning && alive(*m)) ||
        (!finished_by_manifest && (recent || qdstrm_recent))) {
      found.state = ReportState::writing;
      found.reason = "changed " + seconds_ago(std::max(found.modified,
                                                       qdstrm ? qdstrm->modified : found.modified),
                                              options_.now);
      return;
    }
    // A manifest that says its capture was lost (the name was another file's, the folder full):
    // the file under that name is not this process's report.
    if (finished_by_manifest && m->state != kManifestComplete && m->state != kManifestQdstrm &&
        m->state != kManifestRunning) {
      found.state = ReportState::missing;
      found.reason = m->reason.empty() ? "nsys wrote no report" : m->reason;
      return;
    }
    if (found.bytes < kEmptyReportBytes) {
      found.state = ReportState::empty;
      found.reason = std::to_string(found.bytes) + " bytes: too small to hold a profile";
      return;
    }
    if (is_vllm_generation_worker(found.worker) && !worker_processes.empty()) {
      found.state = ReportState::empty;
      std::string list;
      for (long long pid : worker_processes) {
        if (list.size() > 200) {
          list += ", ...";
          break;
        }
        list += (list.empty() ? "" : ", ") + std::string("worker_process_") + std::to_string(pid);
      }
      found.reason = "vLLM model parallelism: the profile is in " + list;
      return;
    }
    found.state = ReportState::complete;
  }

  void classify_manifest_only(FoundReport& found, const Manifest& m, const fs::path& folder) {
    // The report's name as nsys will write it; a manifest still waiting for the program's
    // process id stands for itself.
    found.path = m.pid != 0 ? folder / fs::path(m.report).filename() : *found.manifest;
    if (m.state == kManifestRunning) {
      const Liveness live = liveness(m);
      if (live != Liveness::gone) {
        found.state = ReportState::running;
        found.reason = m.pid == 0 ? "starting: the program's process id is not known yet"
                                  : "the profiled process is running; no report yet";
        if (live == Liveness::unknown) found.reason += unknown_liveness_note(m);
      } else {
        found.state = ReportState::missing;
        found.reason = "nsel exec (pid " + std::to_string(m.nsel_pid) +
                       ") ended without recording an end: it was killed";
        if (const auto unnamed = unnamed_report_of(m)) {
          found.reason += "; nsys's report is " + quote(unnamed->string()) +
                          ", not yet under its name: 'nsel recover' names it";
        }
      }
      return;
    }
    found.state = ReportState::missing;
    found.reason = m.reason.empty() ? "nsys wrote no report" : m.reason;
  }

  const DiscoveryOptions& options_;
  Discovery& out_;
  const std::optional<unsigned long long> own_namespace_ = own_pid_namespace();
  const std::optional<std::string> own_boot_id_ = kernel_boot_id();
  mutable std::optional<NamespaceProcesses> namespaces_;  // read once, when first needed
};

// A report reached by a link and by its own name (or by two links) is one report: the one under
// its own name is kept, as `nsel report` counts each file once.
void count_linked_reports_once(Discovery& out) {
  std::map<std::pair<dev_t, ino_t>, std::size_t> seen;  // file -> index of the one kept
  std::vector<bool> drop(out.reports.size(), false);
  const auto is_link = [](const fs::path& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  };
  for (std::size_t i = 0; i < out.reports.size(); ++i) {
    struct stat st {};
    if (::stat(out.reports[i].path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const auto [at, fresh] = seen.try_emplace({st.st_dev, st.st_ino}, i);
    if (fresh) continue;
    std::size_t keep = at->second;
    std::size_t other = i;
    if (is_link(out.reports[keep].path) && !is_link(out.reports[i].path)) std::swap(keep, other);
    at->second = keep;
    drop[other] = true;
    out.notes.push_back({out.reports[other].root, out.reports[other].path.string(), "linked_report",
                         quote(out.reports[other].path.string()) + " is the same file as " +
                             quote(out.reports[keep].path.string()) + "; counted once"});
  }
  std::size_t next = 0;
  for (std::size_t i = 0; i < out.reports.size(); ++i) {
    if (drop[i]) continue;
    if (next != i) out.reports[next] = std::move(out.reports[i]);  // never onto itself
    ++next;
  }
  out.reports.resize(next);
}

std::string local_host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

Discovery discover_reports(const std::vector<fs::path>& roots, const DiscoveryOptions& given) {
  DiscoveryOptions options = given;
  if (options.local_host.empty()) options.local_host = local_host_name();
  Discovery out;
  Walker walker(options, out);
  std::set<std::string> seen;
  for (const fs::path& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      // A missing root is searched in vain; one that cannot be looked at is told.
      if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
        out.notes.push_back({root.string(), root.string(), std::string(kUnreadableFolderNote),
                             "cannot read " + quote(root.string()) + ": " + ec.message() +
                                 "; any reports in it are not counted"});
      }
      continue;
    }
    const std::string canonical = fs::weakly_canonical(root, ec).string();
    if (!seen.insert(canonical).second) continue;  // the same folder given twice
    out.roots.push_back(root.string());
    Context context;
    context.root = root.string();
    // A root inside a synced tree keeps what its path says (".../<job>-logs/ray/<node>").
    const fs::path absolute = fs::path(canonical);
    for (const auto& part : absolute) {
      const std::string name = part.string();
      if (context.in_ray_folder) {
        context.node = name;
        context.in_ray_folder = false;
      } else if (name.size() > 5 && name.ends_with("-logs")) {
        context.job = name.substr(0, name.size() - 5);
      } else if (name == "ray" && !context.job.empty()) {
        context.in_ray_folder = true;
      }
    }
    if (is_ray_session_name(absolute.filename().string())) {  // a session folder given directly
      walker.scan_session(root, absolute.filename().string(), context);
      continue;
    }
    walker.walk(root, context, 0);
  }
  count_linked_reports_once(out);
  std::sort(out.reports.begin(), out.reports.end(), [](const FoundReport& a, const FoundReport& b) {
    return std::tie(a.root, a.job, a.node, a.session, a.worker, a.rank, a.pid, a.path) <
           std::tie(b.root, b.job, b.node, b.session, b.worker, b.rank, b.pid, b.path);
  });
  return out;
}

}  // namespace nsel
