// The SQLite exports of reports: `nsys export --type sqlite` once per report, with an nsys that
// can read it (chosen by the version that wrote it), cached beside it (or in a private cache
// folder when that folder may not be written) and made again when the report's content is not
// the one the export was made from or the export there is not complete.
// Finding the reports is `reports`' (nsel/reports/report_files.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/core/nsys_version.hpp"
#include "nsel/core/settings.hpp"

namespace nsel {

struct ExportSettings {
  std::string nsys;  // when set: this nsys (absolute path) exports every report
  // Else the installs (find_nsys_installs, in search order): each report is exported with the
  // one choose_nsys picks for the version that wrote it.
  std::vector<NsysInstall> installs;
  std::filesystem::path cache_dir;  // used when the report's own folder is read-only
  // Told just before nsys starts on a report (for progress); may be empty.
  std::function<void(const std::filesystem::path& report)> exporting;
  // Given nsys's own output of each export it ran, failed or not (nsel report -v); may be empty.
  // Without it that output is only kept, on failure, in the log the error names.
  std::function<void(const std::filesystem::path& report, const std::string& nsys_output)>
      nsys_output;
};

// Beside where a report's export would be, when nsys failed to make it: nsys's own output
// (r.nsys-export.log for r.nsys-rep), named in the error; removed by the next export that works.
inline constexpr std::string_view kExportLogSuffix = ".nsys-export.log";

struct ExportResult {
  std::filesystem::path file;
  bool made = false;  // false: an up-to-date export was already there
  // What the reader should know of how it was found: another user's export beside the report,
  // passed over (one line each, for the report's notes).
  std::vector<std::string> notes;
};

// The tables nsel reads from an export; where nsys can (`export --tables`, 2023.4 on), an export
// holds only these and the metadata table, and is named <stem>.nsel.sqlite (kTablesExportSuffix).
inline constexpr std::string_view kExportedTables[] = {"StringIds",
                                                       "NVTX_EVENTS",
                                                       "CUPTI_ACTIVITY_KIND_KERNEL",
                                                       "OSRT_API",
                                                       "CUPTI_ACTIVITY_KIND_MEMCPY",
                                                       "CUPTI_ACTIVITY_KIND_MEMSET",
                                                       "PROCESSES",
                                                       "ThreadNames",
                                                       "TARGET_INFO_SYSTEM_ENV"};

// Beside each export nsel makes: the fingerprint of the report it was made from
// (report_fingerprint), e.g. r.nsel.sqlite.nsel-source.
inline constexpr std::string_view kExportSourceSuffix = ".nsel-source";

// The export to read for `report` (a .sqlite is its own export). Throws nsel::Error (exit code
// 1) with one line naming the report when it is empty, when no install can read it (which
// version wrote it, which were found) or when nsys cannot export it (naming nsys's version), and
// naming the cache folder when that is not private (prepare_export_cache). Writes to a temporary
// name and renames only a complete export, so no partial export is ever used. An existing export
// is used only when complete and made from this report's content: its record
// (kExportSourceSuffix) holds the report's fingerprint; one without a record (an older nsel's,
// the user's own) only when beside the report and newer than the report. Files of other users
// are never read, beside the report or in the cache: where another user's export or record is
// beside the report, the export is made in the cache folder and ExportResult::notes says so.
// Where the report's folder lacks the room for its export, the export is made in the cache
// folder instead (and found there next time); where that fails too, ExportNoSpace says so.
ExportResult ensure_export(const std::filesystem::path& report, const ExportSettings& settings);

// ensure_export's error when no folder had room for the export: the report was not judged, and
// may well be fine (`check` says so rather than calling it unreadable).
class ExportNoSpace : public Error {
 public:
  using Error::Error;
};

// Whether `file` is a complete nsys export: a SQLite database with nsys's metadata table
// (EXPORT_META_DATA or META_DATA_EXPORT, written last). False for a partial one (2022.4 leaves
// one holding only StringIds when it fails on a newer report) or anything else.
bool is_complete_export(const std::filesystem::path& file);

// The version of Nsight Systems that captured the report an export was made from, from
// TARGET_INFO_SYSTEM_ENV's TargetInstallDir (e.g. ".../NsightSystems-cli-2023.2.3/..."); nullopt
// when the folder names none (Debian's does not).
std::optional<NsysVersion> export_capture_version(const std::filesystem::path& file);

// Whether nsel may put an export beside a report in `folder`: the system says so and, for root
// (whom access() always lets write), its permission bits allow someone to write. A question of
// its own, not new_file_refusal's (nsel/sys/files.hpp: can nsys write its report there): a
// folder its owner made read-only keeps its reports, and root's exports go to the cache.
bool folder_allows_writing(const std::filesystem::path& folder);

// What identifies a report's content, cheaply on reports of hundreds of MB: its size and an
// FNV-1a hash of its first and last MiB (and the size), as text. Throws nsel::Error naming it
// when it cannot be read.
inline constexpr std::size_t kFingerprintSpan = 1 << 20;
std::string report_fingerprint(const std::filesystem::path& report);

// Creates the export cache folder `dir` (mode 0700) when missing and checks that it is a folder
// of this user that nobody else may write; throws nsel::Error (exit code 1) naming it and why
// otherwise, as its files would be trusted.
void prepare_export_cache(const std::filesystem::path& dir);

// $XDG_CACHE_HOME/nsel/exports, else $HOME/.cache/nsel/exports, else <temp>/nsel-exports-<uid>
// (one per user).
std::filesystem::path default_export_cache_dir(const std::optional<std::string>& xdg_cache_home,
                                               const std::optional<std::string>& home);

// The settings every command (report, diff, check, the demo) exports with, from `environment`:
// the installs find_nsys_installs finds from NSEL_NSYS and PATH (each report then exported by
// the nsys that can read it), and `cache_dir`, else default_export_cache_dir of XDG_CACHE_HOME
// and HOME. `installs` is empty when no nsys is found; a bad NSEL_NSYS throws as
// find_nsys_installs does.
ExportSettings export_settings_from(const EnvLookup& environment,
                                    const std::filesystem::path& cache_dir = {});

}  // namespace nsel
