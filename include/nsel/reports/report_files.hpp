// The reports `nsel report` summarises: .nsys-rep and .sqlite files named, or found under
// folders, by name only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nsel {

// A folder under the paths searched that could not be read, with the system's reason.
struct UnreadableFolder {
  std::filesystem::path folder;
  std::string problem;
};

// The reports named or found (recursively) under `paths`: .nsys-rep files, and .sqlite exports
// that have no report of the same name beside them. A path that does not exist is bad input
// (nsel::Error, exit code 2, naming `source`). Sorted, each file once. The same names count as
// for `nsel ls` and `nsel check` (discover_reports): hidden ones too, nsel's temporaries never,
// links to files followed, links to folders not. Folders that cannot be read go to `unreadable`
// (when given), so that the caller can tell them; they are never passed over in silence.
std::vector<std::filesystem::path> find_report_files(
    const std::vector<std::filesystem::path>& paths, const std::string& source = "PATH",
    std::vector<UnreadableFolder>* unreadable = nullptr);

}  // namespace nsel
