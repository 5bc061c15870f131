#include "nsel/analyze/exports.hpp"

#include <unistd.h>

#include <cstdio>

#include "nsel/core/error.hpp"
#include "nsel/sys/files.hpp"
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

}  // namespace

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
  fs::path target;
  if (::access(folder.c_str(), W_OK) == 0) {
    target = folder / (report.stem().string() + ".sqlite");
  } else {
    target = settings.cache_dir / (report.stem().string() + "-" +
                                   hex_hash(fs::weakly_canonical(report, ec).string()) + ".sqlite");
  }
  if (fs::exists(target, ec) &&
      fs::last_write_time(target, ec) >= fs::last_write_time(report, ec) && !ec) {
    return {target, false};
  }
  fs::create_directories(target.parent_path(), ec);
  // One temporary per target and process is enough: the reports a run exports are distinct
  // files, so no two of its threads ever write the same target. Its name is hidden and does not
  // end in .sqlite, so no finder takes it for a report.
  const fs::path temporary = temporary_sibling(target);
  if (settings.exporting) settings.exporting(report);
  const int code = run_quietly({settings.nsys, "export", "--type", "sqlite", "--force-overwrite",
                                "true", "--output", temporary.string(), report.string()});
  if (code != 0 || !fs::exists(temporary, ec)) {
    fs::remove(temporary, ec);
    throw Error(quote(report.string()) +
                    ": not a readable Nsight Systems report (nsys export exited with " +
                    std::to_string(code) + ")",
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
