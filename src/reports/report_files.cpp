#include "nsel/reports/report_files.hpp"

#include <algorithm>
#include <set>

#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "reports/identify.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

// Hidden names count (a worker may be named so), as in discover_reports; nsel's own
// temporaries never do.
bool is_candidate(const fs::path& file) {
  if (reports_detail::is_nsel_temporary(file.filename().string())) return false;
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

// Every candidate below `folder`, links to files followed and links to folders not (as
// discover_reports walks); a folder that cannot be read is added to `unreadable`.
void walk(const fs::path& folder, std::vector<fs::path>& found,
          std::vector<UnreadableFolder>& unreadable) {
  std::error_code ec;
  fs::directory_iterator it(folder, ec);
  std::vector<fs::path> folders;
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code entry_ec;
    const fs::path& path = it->path();
    if (it->is_directory(entry_ec) && !it->is_symlink(entry_ec)) {
      if (path.filename() != reports_detail::kSyncStateFolder) folders.push_back(path);
    } else if (it->is_regular_file(entry_ec) && is_candidate(path) && !is_cached_export(path)) {
      found.push_back(path);
    } else if (entry_ec && entry_ec != std::errc::no_such_file_or_directory && is_candidate(path)) {
      unreadable.push_back({folder, entry_ec.message()});
      break;
    }
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    unreadable.push_back({folder, ec.message()});
  }
  for (const fs::path& child : folders) walk(child, found, unreadable);
}

}  // namespace

std::vector<fs::path> find_report_files(const std::vector<fs::path>& paths,
                                        const std::string& source,
                                        std::vector<UnreadableFolder>* unreadable) {
  std::vector<fs::path> found;
  std::vector<UnreadableFolder> not_read;
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
    walk(path, found, not_read);
  }
  if (unreadable != nullptr) *unreadable = std::move(not_read);
  // The same file reached twice (a folder and a file in it, or through a link) counts once,
  // under its own name rather than a link's (as discover_reports keeps it).
  std::stable_partition(found.begin(), found.end(), [](const fs::path& file) {
    std::error_code ec;
    return !fs::is_symlink(file, ec);
  });
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
