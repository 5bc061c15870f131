#include "nsel/launch/manifest_recorder.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "launch/nsys_process_tree.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/host.hpp"

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

struct ManifestRecorder::State {
  Manifest manifest;
  std::string output;
  fs::path working_dir;
  fs::path pending_path;  // the manifest's name until the program's pid is known
  fs::path final_path;
  std::atomic<bool> stop{false};
  std::thread watcher;

  fs::path current_path() const { return final_path.empty() ? pending_path : final_path; }

  void write() noexcept {
    try {
      write_file_atomically(current_path(), serialize_manifest(manifest));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nsel: warning: %s\n", e.what());
    }
  }

  void adopt_pid(long long pid) {
    manifest.pid = pid;
    const fs::path report = expand_report_path(output, pid, working_dir);
    manifest.report = report.string();
    final_path = manifest_path_for(report);
    write();
    std::error_code ec;
    fs::remove(pending_path, ec);
  }

  void watch() {
    const auto started = std::chrono::steady_clock::now();
    while (!stop.load()) {
      // Judged by name alone: the manifest's command need not start with nsys.
      if (const auto pid = find_profiled_program(static_cast<pid_t>(manifest.nsel_pid), "")) {
        adopt_pid(*pid);
        return;
      }
      // Quick at first (the program starts within a second), then gentle.
      const bool early = std::chrono::steady_clock::now() - started < std::chrono::seconds(5);
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
};

ManifestRecorder::ManifestRecorder(Manifest manifest, std::string output)
    : state_(std::make_unique<State>()) {
  state_->manifest = std::move(manifest);
  state_->output = std::move(output);
  std::error_code ec;
  state_->working_dir = fs::current_path(ec);
  const fs::path placeholder = expand_report_path(state_->output, 0, state_->working_dir);
  state_->pending_path = placeholder.parent_path() /
                         ("." + state_->manifest.worker + "-pending-" +
                          std::to_string(state_->manifest.nsel_pid) + std::string(kManifestSuffix));
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
// of its environment, nsel_pid and the start time.
void describe_this_process(Manifest& manifest) {
  manifest.host = host_name();
  manifest.node_ip = node_ip_address();
  manifest.nsel_pid = getpid();
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
  return manifest;
}

}  // namespace

// Without an -o value nsys picks "report<N>"; the manifest is then named for the worker.
ManifestRecorder::ManifestRecorder(const WorkerPlan& plan)
    : ManifestRecorder(manifest_for_plan(plan),
                       plan.options.get("o").value_or(plan.worker + "_%p")) {}

ManifestRecorder::~ManifestRecorder() {
  state_->stop = true;
  if (state_->watcher.joinable()) state_->watcher.join();
}

void ManifestRecorder::finish(int exit_status) noexcept {
  try {
    state_->stop = true;
    if (state_->watcher.joinable()) state_->watcher.join();
    Manifest& m = state_->manifest;
    if (m.pid == 0) state_->adopt_pid_from_files();
    m.end_time = utc_timestamp_now();
    m.exit_status = exit_status;
    std::error_code ec;
    const fs::path report(m.report);
    fs::path qdstrm = report;
    qdstrm.replace_extension(".qdstrm");
    // With --capture-range-end=repeat nsys numbers the reports: <stem>.1.nsys-rep, ...
    fs::path first_numbered = report;
    first_numbered.replace_extension(".1.nsys-rep");
    if (m.pid != 0 &&
        (fs::is_regular_file(report, ec) || fs::is_regular_file(first_numbered, ec))) {
      m.state = std::string(kManifestComplete);
      m.reason.clear();
    } else if (m.pid != 0 && fs::is_regular_file(qdstrm, ec)) {
      m.state = std::string(kManifestQdstrm);
      m.reason = "nsys left " + qdstrm.filename().string() +
                 " without importing it; 'nsel recover' converts it";
    } else {
      m.state = std::string(kManifestMissing);
      m.reason = "nsys wrote no report (exit status " + std::to_string(exit_status) +
                 "); the step window may never have been reached";
    }
    state_->write();
    if (!state_->final_path.empty()) {
      fs::remove(state_->pending_path, ec);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nsel: warning: manifest not finished: %s\n", e.what());
  }
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
