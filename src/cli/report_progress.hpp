// Progress of reading many reports, on stderr (nsel report, nsel diff): one line redrawn on a
// terminal, a line per export otherwise.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "cli/commands.hpp"
#include "nsel/core/terminal_text.hpp"
#include "nsel/workflow/summarize_reports.hpp"

namespace nsel::cli {

namespace fs = std::filesystem;

class ReportsProgress {
 public:
  ReportsProgress(std::string command, std::size_t total, bool quiet)
      : command_(std::move(command)),
        total_(total),
        quiet_(quiet),
        terminal_(isatty(STDERR_FILENO) == 1) {}
  void exporting(const fs::path& report) {
    std::lock_guard<std::mutex> lock(mutex_);
    exporting_.insert(report);
    if (!quiet_ && !terminal_) {
      std::fprintf(stderr, "%s: exporting %s\n", command_.c_str(), shown(report).c_str());
    }
    redraw();
  }
  // -v: nsys's own output of an export, each line as its progress bar left it, indented.
  void nsys_said(const fs::path& report, const std::string& output) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (terminal_ && !quiet_) std::fputs("\r\033[K", stderr);
    std::fprintf(stderr, "%s: nsys export of %s said:\n", command_.c_str(), shown(report).c_str());
    const std::string lines = last_output_lines(output, std::string::npos);
    std::size_t begin = 0;
    while (begin < lines.size()) {
      std::size_t end = lines.find('\n', begin);
      if (end == std::string::npos) end = lines.size();
      std::fprintf(stderr, "  %s\n", terminal_text(lines.substr(begin, end - begin)).c_str());
      begin = end + 1;
    }
    redraw();
  }
  void done(const fs::path& report) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++done_;
    exporting_.erase(report);
    redraw();
  }
  void finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (terminal_ && !quiet_) std::fputs("\r\033[K", stderr);
  }

 private:
  void redraw() {
    if (quiet_ || !terminal_) return;
    std::fprintf(stderr, "\r\033[K%s: %zu/%zu reports read", command_.c_str(), done_, total_);
    if (!exporting_.empty()) std::fprintf(stderr, " (%zu exporting)", exporting_.size());
    std::fflush(stderr);
  }
  std::mutex mutex_;
  std::string command_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::set<fs::path> exporting_;
  bool quiet_;
  bool terminal_;
};

// The callbacks that draw `progress` while a set of reports is read: it is made once the reports
// are counted, named by `command()` then ("nsel report", "nsel diff: baseline"); an unreadable
// report is one line, in the reports' order, whatever finished first.
inline ReportProgress reading_progress(std::optional<ReportsProgress>& progress,
                                       std::function<std::string()> command, bool quiet,
                                       bool verbose) {
  ReportProgress told;
  told.found = [&progress, command, quiet](std::size_t total) {
    progress.emplace(command(), total, quiet);
  };
  told.exporting = [&progress](const fs::path& report) { progress->exporting(report); };
  told.read = [&progress](const fs::path& report) { progress->done(report); };
  if (verbose) {
    told.nsys_output = [&progress](const fs::path& report, const std::string& output) {
      progress->nsys_said(report, output);
    };
  }
  told.all_read = [&progress] { progress->finish(); };
  told.failed = [](const ReportFailure& failure) {
    std::fprintf(stderr, "nsel: %s\n", shown(failure.message).c_str());
  };
  return told;
}

}  // namespace nsel::cli
