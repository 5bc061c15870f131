// The lines of `nsel recover`, printed as each file is done: one per file, then the count and
// the importers used. (It has no --json.)
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "nsel/reports/recovery.hpp"

namespace nsel {

// "<file>: <message>": what became of one file (a report given its name, a .qdstrm converted or
// not). Names are escaped for the terminal; each function's line ends in a line feed.
std::string render_recover_file_text(const std::filesystem::path& file, const std::string& message);
// A .qdstrm no importer was found for, with why.
std::string render_recover_left_as_is_text(const std::filesystem::path& qdstrm,
                                           const std::string& problem);
// The last line: how many .qdstrm files were converted and left, and each importer of `used`
// (in the order of use, repeats allowed) named once, with its version when known.
std::string render_recover_summary_text(std::size_t converted, int failed,
                                        const std::vector<ImporterChoice>& used);
// When there was no .qdstrm to convert.
std::string render_recover_nothing_text();

}  // namespace nsel
