#include "nsel/reports/report_files.hpp"

#include <algorithm>
#include <set>

#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

// The temporary name earlier nsel versions gave an export being written.
constexpr const char* kOldTemporaryMark = ".nsel-tmp-";

bool is_candidate(const fs::path& file) {
  if (file.filename().string().find(kOldTemporaryMark) != std::string::npos) return false;
  return file.extension() == ".nsys-rep" || file.extension() == ".sqlite";
}

// An export that sits beside its report is a cache of it, not a report of its own.
bool is_cached_export(const fs::path& file) {
  if (file.extension() != ".sqlite") return false;
  std::error_code ec;
  const std::string name = file.filename().string();
  if (name.ends_with(kTablesExportSuffix)) {
    const std::string stem = name.substr(0, name.size() - kTablesExportSuffix.size());
    if (fs::exists(file.parent_path() / (stem + ".nsys-rep"), ec)) return true;
  }
  return fs::exists(fs::path(file).replace_extension(".nsys-rep"), ec);
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

}  // namespace nsel
