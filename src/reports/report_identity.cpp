#include "nsel/reports/report_identity.hpp"

#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/reports/layout.hpp"
#include "nsel/reports/report_version.hpp"
#include "nsel/sys/files.hpp"
#include "reports/identify.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace reports_detail {

std::string numbered_report_base(const std::string& stem) {
  const size_t dot = stem.rfind('.');
  if (dot == std::string::npos || dot + 1 == stem.size() ||
      stem.find_first_not_of("0123456789", dot + 1) != std::string::npos) {
    return stem;
  }
  return stem.substr(0, dot);
}

std::optional<ReportName> name_of_report(const std::string& stem) {
  const std::string base = numbered_report_base(stem);
  if (auto named = parse_report_file_name(base + ".nsys-rep")) return named;
  // "<worker>_<start>:<stop>_<PID>-<k>": the k-th report of that name, as `nsel exec` names one
  // whose own name was taken (the same PID from another PID namespace, or an old run).
  const size_t dash = base.rfind('-');
  if (dash == std::string::npos || dash + 1 == base.size() ||
      base.find_first_not_of("0123456789", dash + 1) != std::string::npos) {
    return std::nullopt;
  }
  return parse_report_file_name(base.substr(0, dash) + ".nsys-rep");
}

void take_manifest(FoundReport& found, const Manifest& manifest) {
  if (!manifest.worker.empty()) found.worker = manifest.worker;
  found.window = manifest.step_window;
  if (manifest.pid != 0) found.pid = manifest.pid;
  found.rank = manifest_rank(manifest);
  found.local_rank = manifest_local_rank(manifest);
  const std::string node = manifest_node(manifest);
  if (!node.empty() && (found.node.empty() || found.node == kHeadNode)) found.node = node;
}

}  // namespace reports_detail

std::string ReportIdentity::label() const {
  if (pid == 0) return worker;
  return worker + "/" + std::to_string(pid);
}

namespace {

using reports_detail::numbered_report_base;

// Synced SLURM logs: <LOG_DIR>/ray/<node>/<session>/logs/nsight/<report>.
std::string synced_node(const fs::path& folder) {
  std::vector<std::string> parts;
  for (const auto& part : folder) parts.push_back(part.string());
  std::string node;
  for (std::size_t i = 0; i + 2 < parts.size(); ++i) {
    if (parts[i] == "ray" && parts[i + 1].rfind("session_", 0) != 0 &&
        parts[i + 2].rfind("session_", 0) == 0) {
      node = parts[i + 1];
    }
  }
  return node;
}

}  // namespace

// An unreadable candidate is skipped, as discovery skips it.
std::optional<Manifest> manifest_describing(const fs::path& as_report) {
  std::vector<fs::path> candidates{manifest_path_for(as_report)};
  const std::string stem = as_report.stem().string();
  const std::string base = reports_detail::numbered_report_base(stem);
  if (base != stem)
    candidates.push_back(as_report.parent_path() / (base + std::string(kManifestSuffix)));
  for (const fs::path& candidate : candidates) {
    const std::optional<std::string> text = read_capped_file(candidate, kManifestReadCap).text;
    if (!text) continue;
    try {
      return parse_manifest(*text, candidate.string());
    } catch (const Error&) {
    }
  }
  return std::nullopt;
}

ReportIdentity identify_report(const fs::path& report) {
  fs::path as_report = report;
  if (report.extension() == ".sqlite") as_report.replace_extension(".nsys-rep");
  FoundReport found;
  found.node = synced_node(report.parent_path());
  std::optional<StepWindow> window;
  if (as_report.extension() == ".nsys-rep") {
    if (const auto named = reports_detail::name_of_report(as_report.stem().string())) {
      found.worker = named->worker;
      found.pid = named->pid;
      window = named->window;
    }
  }
  ReportIdentity id;
  for (const auto& part : report.parent_path()) {
    if (is_ray_session_name(part.string())) id.session = part.string();  // the innermost
  }
  if (const auto manifest = manifest_describing(as_report)) {
    reports_detail::take_manifest(found, *manifest);
    id.windows_text = manifest->step_window;
    id.pattern = manifest->pattern.value_or("");
    id.started = manifest->start_time;
    try {
      const std::vector<StepWindow> windows = parse_step_windows(manifest->step_window);
      if (windows.size() == 1) window = windows.front();
    } catch (const Error&) {
      // A window nsel cannot read keeps the file name's.
    }
  }
  if (as_report.extension() == ".nsys-rep") {
    std::error_code missing;
    if (fs::is_regular_file(as_report, missing)) {
      try {
        if (const auto version = report_writer_version(as_report)) {
          id.nsys_version = version->release_text();
        }
      } catch (const std::exception&) {
        // Unread, the version is only missing from the header.
      }
    }
  }
  id.worker = found.worker.empty() ? report.stem().string() : found.worker;
  id.rank = found.rank;
  id.node = found.node;
  id.pid = found.pid;
  id.window = window;
  return id;
}

}  // namespace nsel
