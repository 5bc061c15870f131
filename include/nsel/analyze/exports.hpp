// The SQLite exports of reports: `nsys export --type sqlite` once per report, cached beside it
// (or in a cache folder when that is read-only) and made again only when the report is newer.
// Finding the reports is `reports`' (nsel/reports/report_files.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nsel {

struct ExportSettings {
  std::string nsys;                 // absolute path of nsys
  std::filesystem::path cache_dir;  // used when the report's own folder is read-only
  // Told just before nsys starts on a report (for progress); may be empty.
  std::function<void(const std::filesystem::path& report)> exporting;
};

struct ExportResult {
  std::filesystem::path file;
  bool made = false;  // false: an up-to-date export was already there
};

// The export to read for `report` (a .sqlite is its own export). Throws nsel::Error (exit code
// 1) with one line naming the report when it is empty or nsys cannot export it. Writes to a
// temporary name and renames, so no half-written export is ever used.
ExportResult ensure_export(const std::filesystem::path& report, const ExportSettings& settings);

// $XDG_CACHE_HOME/nsel/exports, else $HOME/.cache/nsel/exports, else <temp>/nsel-exports.
std::filesystem::path default_export_cache_dir(const std::optional<std::string>& xdg_cache_home,
                                               const std::optional<std::string>& home);

}  // namespace nsel
