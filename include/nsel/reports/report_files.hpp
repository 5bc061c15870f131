// The reports `nsel report` summarises: .nsys-rep and .sqlite files named, or found under
// folders, by name only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nsel {

// The reports named or found (recursively) under `paths`: .nsys-rep files, and .sqlite exports
// that have no report of the same name beside them. A path that does not exist is bad input
// (nsel::Error, exit code 2, naming `source`). Sorted, each file once.
std::vector<std::filesystem::path> find_report_files(
    const std::vector<std::filesystem::path>& paths, const std::string& source = "PATH");

}  // namespace nsel
