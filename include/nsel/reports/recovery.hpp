// Turning a .qdstrm that nsys left behind (its importer missing, or killed while importing)
// into the .nsys-rep it should have written, with Nsight Systems' own QdstrmImporter.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/manifest.hpp"
#include "nsel/core/nsys_version.hpp"

namespace nsel {

// QdstrmImporter: on PATH (`path_variable`), else that of the first of `installs`
// (find_nsys_installs, in its search order: NSEL_NSYS, PATH, the known locations) that has one
// (importer_of). nullopt when there is none. The installs' search is the only one: recover
// finds every importer that `nsel report` and `doctor` find.
std::optional<std::filesystem::path> find_qdstrm_importer(const std::vector<NsysInstall>& installs,
                                                          std::string_view path_variable);

// The importer for `qdstrm`: that of an install (find_nsys_installs, in search order) of the
// version that wrote it, read from the file (a .qdstrm needs its writer's importer). For a file
// whose writer cannot be read, the one find_qdstrm_importer finds on `path_variable`.
struct ImporterChoice {
  std::optional<std::filesystem::path> importer;
  std::string version;  // of the install it belongs to, when known
  std::string problem;  // one line when there is none: the writer's version, what was found
};
ImporterChoice choose_qdstrm_importer(const std::filesystem::path& qdstrm,
                                      const std::vector<NsysInstall>& installs,
                                      std::string_view path_variable);

struct Recovery {
  std::filesystem::path qdstrm;
  std::filesystem::path report;  // <stem>.nsys-rep beside it
  bool converted = false;
  std::string message;  // what happened, one line
};

// Converts `qdstrm` into <stem>.nsys-rep, or into `report` when given (the report a manifest
// names, for the .qdstrm nsys left in $TMPDIR; copied across file systems). The importer works
// on a copy under a hidden name and its report is linked into place only when complete, so a
// failure changes nothing; the .qdstrm is removed after success unless `keep_qdstrm`. An
// existing report is never replaced.
Recovery recover_qdstrm(const std::filesystem::path& qdstrm, const std::filesystem::path& importer,
                        bool keep_qdstrm = false,
                        const std::optional<std::filesystem::path>& report = std::nullopt);

// The report nsys wrote under the hidden name of its launch (`nsel exec`'s `-o` in the
// manifest's command) that never got its own name: the launcher was killed between nsys's end
// and the rename. nullopt when there is none.
std::optional<std::filesystem::path> unnamed_report_of(const Manifest& manifest);

// Why `nsel recover` may not act on a manifest (nullopt: it may). A manifest is trusted only
// when it is this user's own file and names a report (.nsys-rep), and a .qdstrm it names
// elsewhere (nsys's $TMPDIR) must be this user's file. So a manifest planted in a shared folder
// never makes recover read another user's capture, or write anything.
std::optional<std::string> manifest_paths_problem(const std::filesystem::path& manifest_path,
                                                  const Manifest& manifest);

// The manifest with its report and its launch's hidden name (-o) moved into the manifest's own
// folder, by their file names: what recover writes stays inside the folders it was given, also
// for a manifest copied elsewhere (a mirror, a saved folder).
Manifest confined_to_folder(const Manifest& manifest, const std::filesystem::path& manifest_path);

// Gives that report the name its manifest holds, in a rename that never replaces. Returns what
// was done, for one line of output; `named` says whether it was.
struct Naming {
  bool named = false;
  std::string message;
};
Naming name_unnamed_report(const Manifest& manifest);

// The name a launch meant its report to have: its hidden -o value is "." + that name + "." + a
// tag without dots (plan.cpp). nullopt when the manifest has no such -o or no process id.
std::optional<std::filesystem::path> intended_report_name(const Manifest& manifest);

// A report its run left under the hidden name because every name it could take was another
// file's (state name_taken, `manifest` read from `manifest_path`): renamed, never replacing, to
// the first of those names that is free now, and its manifest rewritten to say complete and
// moved beside it. Nothing is renamed while no name is free.
Naming name_report_left_hidden(const std::filesystem::path& manifest_path,
                               const Manifest& manifest);

}  // namespace nsel
