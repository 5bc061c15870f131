#include "nsel/analyze/exports.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "analyze/sqlite_db.hpp"
#include "nsel/core/error.hpp"
#include "nsel/reports/report_version.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/nsys_installs.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

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

// The nsys (path, version text) to export `report` with.
std::pair<std::string, std::string> nsys_for(const fs::path& report,
                                             const ExportSettings& settings) {
  if (!settings.nsys.empty()) {
    const auto version = ask_nsys_version(settings.nsys);
    return {settings.nsys, version ? version->text : "of unknown version"};
  }
  if (settings.installs.empty()) {
    throw Error(quote(report.string()) +
                    ": no Nsight Systems found to export it (NSEL_NSYS, PATH, known locations); "
                    "install Nsight Systems, or pass .sqlite exports",
                1);
  }
  const auto writer = report_writer_version(report);
  const auto chosen = choose_nsys(settings.installs, writer, NsysFileKind::report);
  if (!chosen) {
    throw Error(
        no_nsys_for(quote(report.string()), *writer, NsysFileKind::report, settings.installs), 1);
  }
  const NsysInstall& install = settings.installs[*chosen];
  return {install.path, install.version.text};
}

}  // namespace

bool folder_allows_writing(const fs::path& folder) {
  if (::access(folder.c_str(), W_OK) != 0) return false;
  if (::geteuid() != 0) return true;
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) return false;
  return (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) != 0;
}

bool is_complete_export(const fs::path& file) {
  try {
    const analyze::Database db(file);
    for (std::string_view table : kExportMetadataTables) {
      if (db.has_table(std::string(table))) return true;
    }
  } catch (const std::exception&) {
  }
  return false;
}

std::optional<NsysVersion> export_capture_version(const fs::path& file) {
  const analyze::Database db(file);
  if (!db.has_table("TARGET_INFO_SYSTEM_ENV")) return std::nullopt;
  analyze::Statement query = db.prepare(
      "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'TargetInstallDir' LIMIT 1");
  if (!query.step()) return std::nullopt;
  return parse_nsys_version(query.text(0));
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
  const fs::path base =
      folder_allows_writing(folder)
          ? folder / report.stem()
          : settings.cache_dir / (report.stem().string() + "-" +
                                  hex_hash(fs::weakly_canonical(report, ec).string()));
  // A full export (ours from an nsys without --tables, or the user's own) or one of only the
  // tables nsel reads, whichever is there: used only when complete (a failed nsys export, ours
  // never, others' may, can leave a partial database under the final name) and up to date.
  const fs::path full_target = fs::path(base.string() + ".sqlite");
  const fs::path tables_target = fs::path(base.string() + std::string(kTablesExportSuffix));
  for (const fs::path& existing : {full_target, tables_target}) {
    if (fs::exists(existing, ec) &&
        fs::last_write_time(existing, ec) >= fs::last_write_time(report, ec) && !ec &&
        is_complete_export(existing)) {
      return {existing, false};
    }
  }
  const auto [nsys, nsys_version] = nsys_for(report, settings);
  // Where nsys can export chosen tables (2023.4), only those nsel reads: 3.6x faster on the SC22
  // captures (bench/report_gpu_captures.sh). Under a name of its own, so that `nsys stats` on the
  // report, which reuses <stem>.sqlite, never meets an export lacking its tables.
  const auto version = parse_nsys_version(nsys_version);
  const bool only_tables = version && nsys_behaviour(*version).export_tables;
  const fs::path target = only_tables ? tables_target : full_target;
  fs::create_directories(target.parent_path(), ec);
  // One temporary per target and process is enough: the reports a run exports are distinct
  // files, so no two of its threads ever write the same target. Its name is hidden and does not
  // end in .sqlite, so no finder takes it for a report.
  const fs::path temporary = temporary_sibling(target);
  if (settings.exporting) settings.exporting(report);
  std::vector<std::string> command = {
      nsys,   "export",   "--type",          "sqlite", "--force-overwrite",
      "true", "--output", temporary.string()};
  if (only_tables) {
    std::string tables = "--tables=";
    for (std::string_view table : kExportedTables) tables += std::string(table) + ",";
    for (std::string_view table : kExportMetadataTables) tables += std::string(table) + ",";
    tables.pop_back();
    command.push_back(tables);
  }
  command.push_back(report.string());
  const int code = run_quietly(command);
  if (code != 0 || !is_complete_export(temporary)) {
    fs::remove(temporary, ec);
    throw Error(quote(report.string()) + ": not a readable Nsight Systems report (nsys " +
                    nsys_version + " export " +
                    (code != 0 ? "exited with " + std::to_string(code)
                               : std::string("left no complete export")) +
                    ")",
                1);
  }
  try {
    commit_file(temporary, target);
  } catch (const Error& e) {
    throw Error(quote(report.string()) + ": " + e.what(), 1);
  }
  return {target, true};
}

}  // namespace nsel
