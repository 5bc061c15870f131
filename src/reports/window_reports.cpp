#include "nsel/reports/window_reports.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <system_error>

#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/reports/layout.hpp"
#include "nsel/sys/files.hpp"

namespace nsel {
namespace {

constexpr std::string_view kReportSuffix = ".nsys-rep";

// Digits only, as nsys writes a process id or a capture number.
template <typename Number>
std::optional<Number> digits_value(std::string_view text) {
  Number value{};
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<NumberedReport> parse_numbered_report(std::string_view file_name,
                                                    const RepeatedReports& layout) {
  if (!file_name.starts_with(layout.stem) || !file_name.ends_with(kReportSuffix)) {
    return std::nullopt;
  }
  std::string_view middle = file_name.substr(
      layout.stem.size(), file_name.size() - layout.stem.size() - kReportSuffix.size());
  const size_t dot = middle.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto capture = digits_value<std::size_t>(middle.substr(dot + 1));
  middle = middle.substr(0, dot);
  if (!capture || *capture == 0 || !middle.ends_with(layout.tag)) return std::nullopt;
  const auto pid = digits_value<long long>(middle.substr(0, middle.size() - layout.tag.size()));
  if (!pid) return std::nullopt;
  return NumberedReport{*pid, *capture};
}

WindowReports name_window_reports(const RepeatedReports& layout, std::string_view worker,
                                  const std::vector<StepWindow>& windows) {
  namespace fs = std::filesystem;
  const fs::path directory = layout.directory.empty() ? fs::path(".") : fs::path(layout.directory);
  // pid -> capture number -> file
  std::map<long long, std::map<std::size_t, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();
    if (auto numbered = parse_numbered_report(name, layout)) {
      found[numbered->pid][numbered->capture] = entry.path();
    }
  }
  WindowReports out;
  const std::string who = "worker " + quote(worker);
  if (found.empty()) {
    out.messages.push_back("nsel: " + who + " left no report: none of its windows " +
                           windows_text(windows) +
                           " was reached before the program ended, or nsys failed");
  }
  for (auto& [pid, captures] : found) {
    for (std::size_t k = 1; k <= windows.size(); ++k) {
      WindowReport report{windows[k - 1], pid, std::nullopt};
      const auto numbered = captures.find(k);
      if (numbered == captures.end()) {
        out.messages.push_back("nsel: " + who + " (process " + std::to_string(pid) +
                               ") never reached window " + windows[k - 1].text() +
                               " (the program ended first); no report for it");
        out.reports.push_back(report);
        continue;
      }
      // Never over another's file: a name whose report, .qdstrm or manifest is there (the same
      // pid in another PID namespace, an old run) gives way to the first free "-<k>" variant,
      // taken in a rename that never replaces, as a single window's report is named.
      const fs::path wanted = directory / report_file_name(worker, windows[k - 1], pid);
      int error = EEXIST;
      fs::path target;
      for (int variant = 1; variant <= kReportNameVariants && error == EEXIST; ++variant) {
        target = report_name_variant(wanted, variant);
        bool taken = false;
        for (const fs::path& file : files_claiming_report_name(target)) taken |= anything_at(file);
        if (!taken) error = rename_no_replace(numbered->second, target);
      }
      if (error != 0) {
        out.messages.push_back(
            "nsel: warning: cannot rename " + quote(numbered->second.string()) + " to " +
            quote(wanted.string()) + " or a free variant of it: " + std::strerror(error) +
            "; the report of window " + windows[k - 1].text() + " keeps its name");
        report.path = numbered->second;
      } else {
        if (target != wanted) {
          out.messages.push_back("nsel: warning: " + quote(wanted.string()) +
                                 " is taken by another capture; the report of window " +
                                 windows[k - 1].text() + " is " + quote(target.string()));
        }
        out.messages.push_back("nsel: report of window " + windows[k - 1].text() + ": " +
                               target.string());
        report.path = target;
      }
      captures.erase(numbered);
      out.reports.push_back(report);
    }
    for (const auto& [capture, path] : captures) {
      out.messages.push_back("nsel: warning: " + quote(path.string()) + " is capture " +
                             std::to_string(capture) + " but there are only " +
                             std::to_string(windows.size()) + " windows; it keeps its name");
    }
  }
  return out;
}

}  // namespace nsel
