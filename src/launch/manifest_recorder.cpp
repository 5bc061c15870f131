#include "nsel/launch/manifest_recorder.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "launch/nsys_process_tree.hpp"
#include "nsel/core/capture.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/core/values.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/host.hpp"
#include "nsel/sys/proc.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

// nsys's -o expansion with `pid_text` for %p.
fs::path expand_output(std::string_view output, const std::string& pid_text,
                       const fs::path& working_dir) {
  std::string expanded;
  for (size_t i = 0; i < output.size(); ++i) {
    if (output[i] != '%' || i + 1 == output.size()) {
      expanded += output[i];
      continue;
    }
    const char code = output[i + 1];
    if (code == 'p') {
      expanded += pid_text;
      ++i;
    } else if (code == '%') {
      expanded += '%';
      ++i;
    } else if (code == 'h') {
      expanded += host_name();
      ++i;
    } else if (code == 'q' && i + 2 < output.size() && output[i + 2] == '{') {
      const size_t close = output.find('}', i + 3);
      if (close == std::string_view::npos) {
        expanded += output[i];
        continue;
      }
      const std::string name(output.substr(i + 3, close - i - 3));
      if (const char* value = std::getenv(name.c_str())) expanded += value;
      i = close;
    } else {
      expanded += output[i];
    }
  }
  if (!expanded.ends_with(".nsys-rep")) expanded += ".nsys-rep";
  fs::path path(expanded);
  if (path.is_relative()) path = working_dir / path;
  return path.lexically_normal();
}

}  // namespace

fs::path expand_report_path(std::string_view output, long long pid, const fs::path& working_dir) {
  return expand_output(output, std::to_string(pid), working_dir);
}

namespace {

fs::path with_extension(fs::path path, const char* extension) {
  path.replace_extension(extension);
  return path;
}

bool name_taken(const fs::path& report) {
  for (const fs::path& file : files_claiming_report_name(report)) {
    if (anything_at(file)) return true;
  }
  return false;
}

// Why the folder cannot take a report now, tried for real (permission bits say nothing to root):
// less free space than the report needs (`report_bytes`, an estimate; 0: none at all), or a new
// file refused. kManifestDiskFull, kManifestNotWritable, or "" when it takes one; `detail` gets
// the figures or the system's word.
std::string_view folder_problem(const fs::path& folder, std::uintmax_t report_bytes,
                                std::string& detail) {
  struct statvfs space {};
  if (::statvfs(folder.c_str(), &space) == 0) {
    const std::uintmax_t free_bytes =
        static_cast<std::uintmax_t>(space.f_bavail) * static_cast<std::uintmax_t>(space.f_frsize);
    if (free_bytes == 0 || free_bytes < report_bytes) {
      detail = report_bytes == 0 ? "no free space"
                                 : size_text(free_bytes) + " free, the report needs about " +
                                       size_text(report_bytes);
      return kManifestDiskFull;
    }
  }
  if (const int error = new_file_refusal(folder); error != 0) {
    detail = std::strerror(error);
    return error == ENOSPC || error == EDQUOT ? kManifestDiskFull : kManifestNotWritable;
  }
  return {};
}

}  // namespace

std::string longest_file_name(const WorkerPlan& plan) {
  // Linux's largest pid_max (2^22).
  const std::string pid = "4194304";
  const std::string output = plan.options.get("o").value_or(plan.worker + "_%p");
  const fs::path here("/");
  std::vector<std::string> reports;  // as nsel names them, then nsys's own names
  std::vector<std::string> names;
  const std::string nsys_name = expand_output(output, pid, here).filename().string();
  if (plan.report_output) {
    reports.push_back(
        report_name_variant(expand_output(*plan.report_output, pid, here), kReportNameVariants)
            .filename()
            .string());
  } else if (plan.repeated_reports) {
    for (const StepWindow& window : plan.windows) {
      reports.push_back(plan.worker + "_" + window.text() + "_" + pid + ".nsys-rep");
    }
    std::string numbered = nsys_name;
    numbered.insert(numbered.size() - std::string_view(".nsys-rep").size(),
                    "." + std::to_string(plan.windows.size()));
    names.push_back(numbered);
  } else {
    reports.push_back(nsys_name);
  }
  names.push_back(nsys_name);
  const std::string pending =
      "." + plan.worker + "-pending-" + pid + "-00000000" + std::string(kManifestSuffix);
  names.push_back("." + pending + ".tmp-" + pid);
  for (const std::string& report : reports) {
    const std::string stem = report.substr(0, report.size() - std::string_view(".nsys-rep").size());
    names.push_back("." + stem + std::string(kManifestSuffix) + ".tmp-" + pid);
    names.push_back("." + stem + ".nsel-recover-" + pid + ".nsys-rep");
  }
  std::string longest;
  for (const std::string& name : names) {
    if (name.size() > longest.size()) longest = name;
  }
  return longest;
}

namespace {

// Whether `text` holds `line` as one whole line.
bool has_line(std::string_view text, std::string_view line) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    if (text.substr(begin, end - begin) == line) return true;
    begin = end + 1;
  }
  return false;
}

}  // namespace

struct ManifestRecorder::State {
  Manifest manifest;
  std::string output;         // nsys's -o value
  std::string report_output;  // the -o form of the report's final name (== output: nsys's own)
  fs::path working_dir;
  fs::file_time_type started = fs::file_time_type::clock::now();
  fs::path pending_path;  // the manifest's name until the program's pid is known
  fs::path final_path;    // the manifest's claimed name, once the pid is known
  fs::path nsys_report;   // where nsys writes the report (the hidden name, when it is renamed)
  bool claim_failed = false;
  std::uintmax_t report_bytes = 0;      // the report's expected size, to tell a full disk
  std::mutex record_mutex;              // step_record is set while the watcher looks
  std::optional<fs::path> step_record;  // what the program's step control told (kStepRecord*)
  std::string nsys_version;             // for the failure of nsys, when known
  pid_t watch_root = 0;                 // the program descends from it (nsys, or this process)
  std::atomic<bool> stop{false};
  std::thread watcher;

  fs::path current_path() const { return final_path.empty() ? pending_path : final_path; }

  static void warn(const std::string& what) noexcept {
    std::fprintf(stderr, "nsel: warning: %s\n", what.c_str());
  }

  void write() noexcept {
    try {
      write_file_atomically(current_path(), serialize_manifest(manifest));
    } catch (const std::exception& e) {
      warn(e.what());
    }
  }

  // The pid is known: the report's final name is claimed by moving the pending manifest onto
  // that name's manifest, in one rename that never replaces. A name whose report, .qdstrm or
  // manifest exists (the same pid in another PID namespace, an old run) is passed over for its
  // next "-<k>" variant, when nsel names the report itself.
  void adopt_pid(long long pid) {
    manifest.pid = pid;
    nsys_report = expand_report_path(output, pid, working_dir);
    const fs::path wanted = expand_report_path(report_output, pid, working_dir);
    const bool renamed = report_output != output;
    for (int k = 1; k <= (renamed ? kReportNameVariants : 1); ++k) {
      const fs::path report = report_name_variant(wanted, k);
      // Where nsys writes under the final name itself, its report there may be this run's own.
      std::error_code ec;
      if (renamed ? name_taken(report) : fs::exists(manifest_path_for(report), ec)) continue;
      manifest.report = report.string();
      write();  // the pending manifest now names its report
      const int error = rename_no_replace(pending_path, manifest_path_for(report));
      if (error == 0) {
        final_path = manifest_path_for(report);
        return;
      }
      if (error != EEXIST) {
        warn("cannot move " + pending_path.string() + " to " + manifest_path_for(report).string() +
             ": " + std::strerror(error));
        return;  // the pending manifest stays the manifest
      }
    }
    claim_failed = true;
    manifest.report = (renamed ? nsys_report : wanted).string();
    write();
  }

  // What nsys left in its temporary folder when it could not write where it should:
  // "nsys-report-<id>.qdstrm" or "nsys-report-<id>.nsys-rep", changed since this run started,
  // whose end (where nsys writes the session's command line and the program's output files)
  // names this run's -o value and pid.
  // nsys opens it only once the program has ended, so it is looked for after nsys has exited.
  std::optional<fs::path> find_left_capture() const {
    const fs::path folder = temporary_folder_setting();
    const std::string pid_mark = "pid_" + std::to_string(manifest.pid) + "_std";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const std::string name = entry.path().filename().string();
      std::error_code entry_ec;
      // A .qdstrm it could not import where it should, or a whole report it wrote there
      // instead (Nsight Systems 2022.4 when the report's folder refused the file).
      if (!name.starts_with("nsys-report-") ||
          !(name.ends_with(".qdstrm") || name.ends_with(".nsys-rep")) ||
          !entry.is_regular_file(entry_ec) || entry.last_write_time(entry_ec) < started) {
        continue;
      }
      std::ifstream in(entry.path(), std::ios::binary);
      constexpr std::streamoff kTail = 256 * 1024;
      in.seekg(0, std::ios::end);
      const std::streamoff size = in.tellg();
      in.seekg(std::max<std::streamoff>(0, size - kTail));
      const std::string tail{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      // nsel's own -o value holds this launch's tag, so it alone names the run. A user's own
      // is checked against the pid too, which a compressed .nsys-rep may not hold as text
      // (2023.4 wrote "pid_" and then a back-reference for the digits).
      const bool own_output = report_output != output;
      if (tail.find(output) != std::string::npos &&
          (own_output || manifest.pid == 0 || tail.find(pid_mark) != std::string::npos)) {
        return entry.path();
      }
    }
    return std::nullopt;
  }

  // The program's pid as nsel's step nsel-as-started told it, just before it became the program
  // (kStepRecordPid): the pid nsys names its report for, even when the program forks its work
  // and exits at once (its children are not the program).
  std::optional<long long> told_pid() {
    std::optional<fs::path> record;
    {
      const std::lock_guard lock(record_mutex);
      record = step_record;
    }
    if (!record) return std::nullopt;
    const std::string told = read_small_file(*record).value_or("");
    const std::string mark = std::string(kStepRecordPid) + " ";
    // Whole lines only: a line still being written could show a pid cut short.
    for (std::size_t begin = 0; begin < told.size();) {
      const std::size_t end = told.find('\n', begin);
      if (end == std::string::npos) break;
      const std::string_view line = std::string_view(told).substr(begin, end - begin);
      if (line.starts_with(mark)) {
        long long pid = 0;
        const std::string_view digits = line.substr(mark.size());
        const auto [at, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
        if (ec == std::errc() && at == digits.data() + digits.size() && pid > 0) return pid;
      }
      begin = end + 1;
    }
    return std::nullopt;
  }

  void watch() {
    const auto watching = std::chrono::steady_clock::now();
    while (!stop.load()) {
      if (const auto told = told_pid()) {
        adopt_pid(*told);
        return;
      }
      // Judged by name alone: the manifest's command need not start with nsys. The step may
      // have told the pid since the record was read: its word wins over a process found.
      if (const auto pid = find_profiled_program(watch_root, "")) {
        adopt_pid(told_pid().value_or(*pid));
        return;
      }
      // Quick at first (the program starts within a second), then gentle.
      const bool early = std::chrono::steady_clock::now() - watching < std::chrono::seconds(5);
      std::this_thread::sleep_for(std::chrono::milliseconds(early ? 10 : 200));
    }
  }

  // A program that ended before the watcher saw it: the one new report of this run whose name
  // fits the -o value with a number where %p is.
  void adopt_pid_from_files() {
    if (output.find("%p") == std::string::npos) return;
    const std::string sentinel = "\x01";
    const std::string shaped = expand_output(output, sentinel, working_dir).string();
    const size_t at = shaped.find(sentinel);
    if (at == std::string::npos) return;
    const std::string prefix = shaped.substr(0, at);
    const std::string suffix = shaped.substr(at + sentinel.size());
    std::optional<long long> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(shaped).parent_path(), ec)) {
      std::string path = entry.path().string();
      if (path.ends_with(".qdstrm")) path = path.substr(0, path.size() - 7) + ".nsys-rep";
      if (!path.starts_with(prefix) || !path.ends_with(suffix)) continue;
      const std::string digits =
          path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
      if (fs::exists(manifest_path_for(path), ec)) continue;  // another process's report
      if (found && *found != std::stoll(digits)) return;      // ambiguous: leave it unknown
      found = std::stoll(digits);
    }
    if (found) adopt_pid(*found);
  }

  // nsys's report (and a .qdstrm it left beside it) under the claimed name.
  void name_report() {
    const fs::path report(manifest.report);
    if (nsys_report.empty() || nsys_report == report) return;
    for (const char* extension : {".nsys-rep", ".qdstrm"}) {
      const fs::path from = with_extension(nsys_report, extension);
      std::error_code ec;
      if (!fs::is_regular_file(from, ec)) continue;
      const fs::path to = with_extension(report, extension);
      if (const int error = rename_no_replace(from, to); error != 0) {
        warn("cannot rename " + from.string() + " to " + to.string() + ": " + std::strerror(error) +
             "; it keeps its name");
        if (std::string_view(extension) == ".nsys-rep") manifest.report = from.string();
      }
    }
  }
};

ManifestRecorder::ManifestRecorder(Manifest manifest, std::string output,
                                   std::optional<std::string> report_output, pid_t nsys)
    : state_(std::make_unique<State>()) {
  state_->manifest = std::move(manifest);
  state_->watch_root = nsys > 0 ? nsys : static_cast<pid_t>(state_->manifest.nsel_pid);
  state_->output = std::move(output);
  state_->report_output = report_output.value_or(state_->output);
  std::error_code ec;
  state_->working_dir = fs::current_path(ec);
  const fs::path placeholder = expand_report_path(state_->output, 0, state_->working_dir);
  // A random word too: two launchers in two PID namespaces may share a pid and a folder.
  char word[16];
  std::snprintf(word, sizeof word, "%08x", static_cast<unsigned>(std::random_device{}()));
  state_->pending_path = placeholder.parent_path() / ("." + state_->manifest.worker + "-pending-" +
                                                      std::to_string(state_->manifest.nsel_pid) +
                                                      "-" + word + std::string(kManifestSuffix));
  state_->manifest.report = placeholder.string();
  state_->write();
  // The watcher must never take a signal meant for the supervisor: it starts with all blocked.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    state_->watcher = std::thread([state = state_.get()] { state->watch(); });
  } catch (const std::exception&) {
    // No watcher: finish() still records the end and looks for the report by name.
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

namespace {

// A manifest's worker-independent fields from this process: host, node IP, the rank variables
// of its environment, nsel_pid, its PID namespace and boot, and the start time.
void describe_this_process(Manifest& manifest) {
  manifest.host = host_name();
  manifest.node_ip = node_ip_address();
  manifest.nsel_pid = getpid();
  manifest.pid_namespace = own_pid_namespace();
  manifest.boot_id = kernel_boot_id();
  for (std::string_view name : rank_variable_names()) {
    if (const char* value = std::getenv(std::string(name).c_str())) {
      manifest.rank_variables[std::string(name)] = value;
    }
  }
  manifest.start_time = utc_timestamp_now();
}

Manifest manifest_for_plan(const WorkerPlan& plan) {
  Manifest manifest;
  manifest.worker = plan.worker;
  manifest.pattern = plan.pattern;
  if (plan.window) {
    manifest.step_window = plan.window->text();
    manifest.step_start = plan.window->start;
    manifest.step_stop = plan.window->stop;
  }
  manifest.command = plan.command;
  describe_this_process(manifest);
  // As the plan decided it, so that a rank given by --rank (or rank= in Python) is the one every
  // command shows, not only what the variables say.
  manifest.rank = plan.identity.rank.value;
  manifest.local_rank = plan.identity.local_rank.value;
  if (plan.identity.node.value && plan.identity.node.source != kHostNameSource) {
    manifest.node = plan.identity.node.value;
  }
  return manifest;
}

}  // namespace

// Without an -o value nsys picks "report<N>"; the manifest is then named for the worker.
ManifestRecorder::ManifestRecorder(const WorkerPlan& plan, pid_t nsys)
    : ManifestRecorder(manifest_for_plan(plan), plan.options.get("o").value_or(plan.worker + "_%p"),
                       plan.report_output, nsys) {
  state_->report_bytes = estimate_report_size(plan).bytes;
}

ManifestRecorder::~ManifestRecorder() {
  state_->stop = true;
  if (state_->watcher.joinable()) state_->watcher.join();
}

std::string ManifestRecorder::finish(int exit_status, bool stop_timed_out) noexcept {
  try {
    state_->stop = true;
    if (state_->watcher.joinable()) state_->watcher.join();
    Manifest& m = state_->manifest;
    if (m.pid == 0) {
      if (const auto told = state_->told_pid()) state_->adopt_pid(*told);
    }
    if (m.pid == 0) state_->adopt_pid_from_files();
    m.end_time = utc_timestamp_now();
    m.exit_status = exit_status;
    if (m.pid != 0) state_->name_report();
    std::error_code ec;
    const fs::path report(m.report);
    const fs::path qdstrm = with_extension(report, ".qdstrm");
    // With --capture-range-end=repeat nsys numbers the reports: <stem>.1.nsys-rep, ...
    const fs::path first_numbered = with_extension(report, ".1.nsys-rep");
    const std::string timeout_text =
        "nsys did not finish within NSEL_STOP_TIMEOUT and was interrupted (exit status " +
        std::to_string(exit_status) + ")";
    m.qdstrm.reset();
    // Where nsys writes under the final name itself (a user's own 'o'), a file there older than
    // this run is another's: nsys refused to write over it ("File exists"). File times come
    // from the kernel's coarse clock, a tick behind: 100 ms of slack.
    const auto written_here = [&](const fs::path& file) {
      std::error_code error;
      return fs::is_regular_file(file, error) &&
             (state_->report_output != state_->output ||
              fs::last_write_time(file, error) >= state_->started - std::chrono::milliseconds(100));
    };
    const bool taken_before = m.pid != 0 && !written_here(report) &&
                              !written_here(first_numbered) && fs::exists(report, ec);
    const bool renamed = state_->report_output != state_->output;
    if (m.pid != 0 && renamed && state_->claim_failed &&
        (written_here(report) || written_here(first_numbered))) {
      // Whole, but under nsys's hidden name: every name it may take was another file's.
      const fs::path wanted = expand_report_path(state_->report_output, m.pid, state_->working_dir);
      m.state = std::string(kManifestNameTaken);
      m.reason = "every name the report may take (" + wanted.filename().string() +
                 " and its -2 to -" + std::to_string(kReportNameVariants) +
                 " variants) is another file's; the whole report stays under nsys's hidden name " +
                 report.filename().string() + ", which 'nsel recover' renames once a name is free";
    } else if (m.pid != 0 && (written_here(report) || written_here(first_numbered))) {
      m.state = std::string(kManifestComplete);
      m.reason = stop_timed_out ? timeout_text + "; the report may lack the last steps" : "";
    } else if (m.pid != 0 && fs::is_regular_file(qdstrm, ec)) {
      m.state = std::string(kManifestQdstrm);
      m.reason = "nsys left " + qdstrm.filename().string() +
                 " without importing it; 'nsel recover' converts it";
    } else {
      // The capture nsys could not import where it should have: recorded for 'nsel recover'.
      std::optional<fs::path> left = state_->find_left_capture();
      std::string detail;
      const std::string_view problem =
          folder_problem(report.parent_path(), state_->report_bytes, detail);
      // Where the folder tells that nsys had to write elsewhere, the file it left may still be
      // being finished (2023.4's end of it, which names this run, came late once in six here):
      // looked for again, 2 s at most.
      for (int tries = 0; !left && tries < 20 && m.pid != 0 &&
                          (!problem.empty() || state_->claim_failed || taken_before);
           ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        left = state_->find_left_capture();
      }
      if (stop_timed_out) {
        m.state = std::string(kManifestStopTimeout);
        m.reason = timeout_text + "; no report was written";
      } else if (!problem.empty()) {
        m.state = std::string(problem);
        m.reason = "nsys could not write " + report.filename().string() + ": its folder " +
                   (problem == kManifestDiskFull ? "is full (" : "is not writable (") + detail +
                   ")";
      } else if (state_->claim_failed || taken_before) {
        m.state = std::string(kManifestNameTaken);
        m.reason = report.filename().string() +
                   " was taken by another file before the program started; nsys wrote no report "
                   "under it (Nsight Systems puts it in $TMPDIR as nsys-report-<id>.nsys-rep)";
      } else {
        const std::string told =
            state_->step_record ? read_small_file(*state_->step_record).value_or("") : "";
        const std::string no_report =
            "nsys wrote no report (exit status " + std::to_string(exit_status) + ")";
        const std::string nsys_named =
            state_->nsys_version.empty() ? std::string("nsys") : "nsys " + state_->nsys_version;
        if (has_line(told, kStepRecordOpened)) {
          m.state = std::string(kManifestNsysFailed);
          m.reason = "the program opened its capture, yet " + nsys_named +
                     " wrote no report (exit status " + std::to_string(exit_status) +
                     "): a failure of Nsight Systems itself; run it again";
        } else if (m.pid == 0 && told.empty() && !left) {
          // Nobody saw the program run (the watcher looks every 10 ms; nsys's injection alone
          // takes longer) and its step control never spoke: nsys ended without starting it,
          // which nsys 2023.4 may do with exit status 0 ("Connection to Agent lost").
          m.state = std::string(kManifestNsysFailed);
          m.reason = "the program never started: " + nsys_named + " ended (exit status " +
                     std::to_string(exit_status) +
                     ") before running it, a failure of Nsight Systems itself; run it again";
        } else if (has_line(told, kStepRecordControlled)) {
          m.state = std::string(kManifestMissing);
          m.reason = no_report + "; the program's step control never opened its window";
        } else {
          m.state = std::string(kManifestMissing);
          m.reason = no_report + "; the step window may never have been reached";
        }
      }
      if (left) {
        m.qdstrm = left->string();
        m.reason += "; nsys left the capture in " + *m.qdstrm + ", which 'nsel recover' converts";
      }
    }
    state_->write();
    if (state_->step_record) fs::remove(*state_->step_record, ec);
    return m.state;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nsel: warning: manifest not finished: %s\n", e.what());
  }
  return std::string(kManifestMissing);
}

bool ManifestRecorder::abandon_unstarted() noexcept {
  state_->stop = true;
  if (state_->watcher.joinable()) state_->watcher.join();
  if (state_->manifest.pid != 0 || !state_->final_path.empty()) return false;
  std::error_code ec;
  fs::remove(state_->pending_path, ec);
  return !ec;
}

void ManifestRecorder::read_step_record(std::filesystem::path record, std::string nsys_version) {
  const std::lock_guard lock(state_->record_mutex);
  state_->step_record = std::move(record);
  state_->nsys_version = std::move(nsys_version);
}

const Manifest& ManifestRecorder::manifest() const {
  return state_->manifest;
}

fs::path ManifestRecorder::path() const {
  return state_->current_path();
}

void ManifestRecorder::split_by_window(
    const std::vector<std::pair<StepWindow, fs::path>>& reports) noexcept {
  try {
    if (reports.empty()) return;  // nothing was written: the session's manifest says so
    for (const auto& [window, report] : reports) {
      Manifest m = state_->manifest;
      m.step_window = window.text();
      m.step_start = window.start;
      m.step_stop = window.stop;
      m.report = report.string();
      m.state = std::string(kManifestComplete);
      m.reason.clear();
      write_file_atomically(manifest_path_for(report), serialize_manifest(m));
    }
    std::error_code ec;
    fs::remove(state_->current_path(), ec);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nsel: warning: manifests not split by window: %s\n", e.what());
  }
}

}  // namespace nsel
