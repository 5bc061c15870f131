#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <set>

#include "nsel/analyze/exports.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

constexpr const char* kTemporaryMark = ".nsel-tmp-";

bool is_candidate(const fs::path& file) {
  if (file.filename().string().find(kTemporaryMark) != std::string::npos) return false;
  return file.extension() == ".nsys-rep" || file.extension() == ".sqlite";
}

// An export that sits beside its report is a cache of it, not a report of its own.
bool is_cached_export(const fs::path& file) {
  if (file.extension() != ".sqlite") return false;
  std::error_code ec;
  return fs::exists(fs::path(file).replace_extension(".nsys-rep"), ec);
}

std::string hex_hash(const std::string& text) {
  // FNV-1a: stable across runs and builds (std::hash is not promised to be).
  unsigned long long h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", h);
  return out;
}

}  // namespace

std::vector<fs::path> find_report_files(const std::vector<fs::path>& paths,
                                        const std::string& source) {
  std::vector<fs::path> found;
  for (const fs::path& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status)) {
      throw Error(bad_value(source, path.string(), "no such file or folder",
                            "a report (.nsys-rep), an export (.sqlite) or a folder holding them"));
    }
    if (!fs::is_directory(status)) {
      // A manifest describes a report; it is never summarised as one.
      if (path.filename().string().ends_with(kManifestSuffix)) {
        throw Error(bad_value(source, path.string(), "a manifest (.nsel.json), not a report",
                              "a report (.nsys-rep), an export (.sqlite) or a folder holding "
                              "them"));
      }
      found.push_back(path);  // named explicitly: summarised (or reported as not a report)
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(
             path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec) && is_candidate(it->path()) && !is_cached_export(it->path())) {
        found.push_back(it->path());
      }
    }
  }
  // The same file reached twice (a folder and a file in it, or through a link) counts once.
  std::vector<fs::path> unique;
  std::set<fs::path> seen;
  for (const fs::path& file : found) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(file, ec);
    if (seen.insert(ec ? file : canonical).second) unique.push_back(file);
  }
  std::sort(unique.begin(), unique.end());
  return unique;
}

fs::path default_export_cache_dir(const std::optional<std::string>& xdg_cache_home,
                                  const std::optional<std::string>& home) {
  if (xdg_cache_home && !xdg_cache_home->empty()) return fs::path(*xdg_cache_home) / "nsel/exports";
  if (home && !home->empty()) return fs::path(*home) / ".cache/nsel/exports";
  return fs::temp_directory_path() / "nsel-exports";
}

ExportResult ensure_export(const fs::path& report, const ExportSettings& settings) {
  if (report.extension() == ".sqlite") return {report, false};
  std::error_code ec;
  const auto size = fs::file_size(report, ec);
  if (ec) throw Error(quote(report.string()) + ": cannot read: " + ec.message(), 1);
  if (size == 0) {
    throw Error(quote(report.string()) +
                    ": empty report (0 bytes): the process ended before nsys finished writing it",
                1);
  }
  const fs::path folder = report.has_parent_path() ? report.parent_path() : fs::path(".");
  fs::path target;
  if (::access(folder.c_str(), W_OK) == 0) {
    target = folder / (report.stem().string() + ".sqlite");
  } else {
    target = settings.cache_dir / (report.stem().string() + "-" +
                                   hex_hash(fs::weakly_canonical(report, ec).string()) + ".sqlite");
  }
  if (fs::exists(target, ec) &&
      fs::last_write_time(target, ec) >= fs::last_write_time(report, ec) && !ec) {
    return {target, false};
  }
  fs::create_directories(target.parent_path(), ec);
  static std::atomic<int> counter{0};
  const fs::path temporary =
      target.parent_path() / (target.stem().string() + kTemporaryMark + std::to_string(getpid()) +
                              "-" + std::to_string(++counter) + ".sqlite");
  if (settings.exporting) settings.exporting(report);
  const int code = settings.run({settings.nsys, "export", "--type", "sqlite", "--force-overwrite",
                                 "true", "--output", temporary.string(), report.string()});
  if (code != 0 || !fs::exists(temporary, ec)) {
    fs::remove(temporary, ec);
    throw Error(quote(report.string()) +
                    ": not a readable Nsight Systems report (nsys export exited with " +
                    std::to_string(code) + ")",
                1);
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw Error(quote(report.string()) + ": cannot store its export as " + quote(target.string()) +
                    ": " + ec.message(),
                1);
  }
  return {target, true};
}

}  // namespace nsel
