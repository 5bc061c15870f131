// `nsel recover`'s job: every left-over .qdstrm under the roots (and each one a manifest says
// nsys left in $TMPDIR) converted with the importer of the version that wrote it, and every whole
// report left under its launch's hidden name given its name. Manifests are followed only as far
// as recover may trust them (manifest_paths_problem). What becomes of each file is told as it is
// done, so a long run shows its progress.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nsel/reports/recovery.hpp"

namespace nsel {

struct RecoverRequest {
  std::vector<std::filesystem::path> roots;       // folders that exist
  std::optional<std::filesystem::path> importer;  // --importer; else chosen for each file
  bool keep_qdstrm = false;                       // --keep-qdstrm
  std::string path_variable;                      // PATH
  std::optional<std::string> nsys_variable;       // NSEL_NSYS
};

// What became of one file, as it is done: a report named or left, a manifest not followed, a
// .qdstrm converted or not.
using RecoverFileDone =
    std::function<void(const std::filesystem::path& file, const std::string& message)>;
// A .qdstrm for which no importer was found, with why.
using RecoverNoImporter =
    std::function<void(const std::filesystem::path& qdstrm, const std::string& problem)>;

struct RecoverOutcome {
  std::size_t qdstrm_files = 0;  // left-over .qdstrm files found
  std::size_t converted = 0;
  int failed = 0;                    // .qdstrm files not converted
  int names_failed = 0;              // hidden reports that could not be given their name
  int refused = 0;                   // manifests not followed
  bool named_any = false;            // a hidden report was looked at (named or not)
  std::vector<ImporterChoice> used;  // the importer of each conversion, in order
  int exit_code() const { return failed + names_failed + refused == 0 ? 0 : 1; }
};

// Throws Error (exit 1) when the one .qdstrm found has no importer.
RecoverOutcome recover_reports(const RecoverRequest& request, const RecoverFileDone& file_done,
                               const RecoverNoImporter& no_importer);

}  // namespace nsel
