#include "nsel/analyze/exports.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "analyze/sqlite_db.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/terminal_text.hpp"
#include "nsel/reports/report_version.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/nsys_installs.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

// FNV-1a: stable across runs and builds (std::hash is not promised to be).
constexpr unsigned long long kFnvStart = 1469598103934665603ULL;
unsigned long long fnv1a(unsigned long long h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}
std::string hex(unsigned long long h) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", h);
  return out;
}
std::string hex_hash(const std::string& text) {
  return hex(fnv1a(kFnvStart, text));
}

// The record kept beside an export we made: which report content it was made from.
fs::path source_record(const fs::path& export_file) {
  return fs::path(export_file.string() + std::string(kExportSourceSuffix));
}

// Whether `existing`, a complete export, may stand for `report` (whose fingerprint is
// `fingerprint`). Only this user's files are read, beside the report as in the cache: anyone
// who may write the folder could plant an export and a record that match. An export we made
// carries the fingerprint of its report: it must match, so a report replaced with its time kept
// (cp -p, rsync -a) is exported again. One without a record (an older nsel's, or the user's own
// `nsys export`) is trusted by time only when it is beside the report.
bool export_stands_for(const fs::path& existing, const fs::path& report,
                       const std::string& fingerprint, bool in_cache) {
  struct stat st {};
  if (::lstat(existing.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (st.st_uid != ::geteuid()) return false;
  const fs::path record = source_record(existing);
  struct stat record_st {};
  if (::lstat(record.c_str(), &record_st) == 0) {
    if (!S_ISREG(record_st.st_mode) || record_st.st_uid != ::geteuid()) return false;
    const std::optional<std::string> recorded = read_small_file(record);
    return recorded && *recorded == fingerprint && is_complete_export(existing);
  }
  std::error_code ec;
  return !in_cache && fs::last_write_time(existing, ec) >= fs::last_write_time(report, ec) && !ec &&
         is_complete_export(existing);
}

// The first of `files` that is there and belongs to another user, with its owner's uid.
std::optional<std::pair<fs::path, uid_t>> another_users_file(const std::vector<fs::path>& files) {
  for (const fs::path& file : files) {
    struct stat st {};
    if (::lstat(file.c_str(), &st) == 0 && st.st_uid != ::geteuid()) {
      return std::pair{file, st.st_uid};
    }
  }
  return std::nullopt;
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
  // Shared by every user: one folder each (prepare_export_cache refuses anyone else's).
  return temporary_folder() / ("nsel-exports-" + std::to_string(::geteuid()));
}

ExportSettings export_settings_from(const EnvLookup& environment, const fs::path& cache_dir) {
  ExportSettings settings;
  settings.installs =
      find_nsys_installs(environment("NSEL_NSYS"), environment("PATH").value_or(""));
  settings.cache_dir = cache_dir.empty() ? default_export_cache_dir(environment("XDG_CACHE_HOME"),
                                                                    environment("HOME"))
                                         : cache_dir;
  return settings;
}

void prepare_export_cache(const fs::path& dir) {
  std::error_code ec;
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw Error(
        quote(dir.string()) + ": cannot create the export cache folder: " + std::strerror(errno),
        1);
  }
  struct stat st {};
  std::string problem;
  if (::lstat(dir.c_str(), &st) != 0) {
    problem = std::strerror(errno);
  } else if (!S_ISDIR(st.st_mode)) {
    problem = "not a folder (a link or a file)";
  } else if (st.st_uid != ::geteuid()) {
    problem = "owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
              std::to_string(::geteuid()) + ")";
  } else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    problem = std::string("writable by others (mode ") + mode + ")";
  }
  if (!problem.empty()) {
    throw Error(quote(dir.string()) + ": export cache folder not used: " + problem +
                    "; choose a private one with --cache-dir or XDG_CACHE_HOME",
                1);
  }
}

std::string report_fingerprint(const fs::path& report) {
  const int fd = ::open(report.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(quote(report.string()) + ": cannot read: " + std::strerror(errno), 1);
  struct stat st {};
  std::string head(kFingerprintSpan, '\0');
  std::string tail(kFingerprintSpan, '\0');
  const auto read_at = [&](std::string& buffer, off_t offset) {
    std::size_t done = 0;
    while (done < buffer.size()) {
      const ssize_t n = ::pread(fd, buffer.data() + done, buffer.size() - done,
                                offset + static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    buffer.resize(done);
  };
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(quote(report.string()) + ": cannot read: " + std::strerror(errno), 1);
  }
  const auto size = static_cast<off_t>(st.st_size);
  read_at(head, 0);
  read_at(tail, size > static_cast<off_t>(kFingerprintSpan)
                    ? size - static_cast<off_t>(kFingerprintSpan)
                    : 0);
  ::close(fd);
  unsigned long long h = fnv1a(kFnvStart, std::to_string(size) + "\n");
  h = fnv1a(h, head);
  h = fnv1a(h, tail);
  return "nsel export source 1\nsize " + std::to_string(size) + "\nhead-tail-fnv1a64 " + hex(h) +
         "\n";
}

namespace {

// Whether a failed export failed for want of space: nsys (SQLite) says so, or the folder it
// wrote in has less room left than the report's size (an export is larger than its report).
bool export_lacked_space(const fs::path& folder, std::uintmax_t report_bytes,
                         const std::string& said) {
  for (std::string_view sign : {"disk is full", "No space left", "SQLITE_FULL", "Disk quota"}) {
    if (said.find(sign) != std::string::npos) return true;
  }
  struct statvfs room {};
  return ::statvfs(folder.c_str(), &room) == 0 &&
         static_cast<std::uintmax_t>(room.f_bavail) * room.f_frsize < report_bytes;
}

std::string free_space_text(const fs::path& folder) {
  struct statvfs room {};
  if (::statvfs(folder.c_str(), &room) != 0) return "its free space unknown";
  const double kib = static_cast<double>(room.f_bavail) * room.f_frsize / 1024.0;
  char text[64];
  std::snprintf(text, sizeof text, "%.0f KiB free", kib);
  return text;
}

}  // namespace

ExportResult ensure_export(const fs::path& report, const ExportSettings& settings) {
  if (report.extension() == ".sqlite") return {report, false, {}};
  std::error_code ec;
  const auto size = fs::file_size(report, ec);
  if (ec) throw Error(quote(report.string()) + ": cannot read: " + ec.message(), 1);
  if (size == 0) {
    throw Error(quote(report.string()) +
                    ": empty report (0 bytes): the process ended before nsys finished writing it",
                1);
  }
  const fs::path folder = report.has_parent_path() ? report.parent_path() : fs::path(".");
  const std::string fingerprint = report_fingerprint(report);
  const auto base_in = [&](bool in_cache) {
    return in_cache ? settings.cache_dir / (report.stem().string() + "-" +
                                            hex_hash(fs::weakly_canonical(report, ec).string()))
                    : folder / report.stem();
  };
  // A full export (ours from an nsys without --tables, or the user's own) or one of only the
  // tables nsel reads, whichever is there: used only when complete (a failed nsys export, ours
  // never, others' may, can leave a partial database under the final name) and made from this
  // very report (export_stands_for).
  const auto existing_in = [&](bool in_cache) -> std::optional<fs::path> {
    const fs::path base = base_in(in_cache);
    for (const fs::path& existing : {fs::path(base.string() + ".sqlite"),
                                     fs::path(base.string() + std::string(kTablesExportSuffix))}) {
      if (export_stands_for(existing, report, fingerprint, in_cache)) return existing;
    }
    return std::nullopt;
  };
  bool in_cache = !folder_allows_writing(folder);
  // Another user's export (or record) beside the report is never this report's, and may not be
  // replaced there: the export is made afresh in the private cache, and the caller told why.
  std::vector<std::string> notes;
  if (!in_cache) {
    const fs::path base = base_in(false);
    std::vector<fs::path> beside;
    for (const std::string& suffix : {std::string(".sqlite"), std::string(kTablesExportSuffix)}) {
      beside.push_back(base.string() + suffix);
      beside.push_back(source_record(base.string() + suffix));
    }
    if (const auto foreign = another_users_file(beside)) {
      in_cache = true;
      notes.push_back(quote(foreign->first.string()) + " belongs to another user (uid " +
                      std::to_string(foreign->second) +
                      "): not read as this report's export; exported afresh into " +
                      quote(settings.cache_dir.string()));
    }
  }
  if (in_cache) prepare_export_cache(settings.cache_dir);
  if (const auto existing = existing_in(in_cache)) return {*existing, false, notes};
  // One made in the cache because the report's folder was full.
  if (!in_cache && fs::is_directory(settings.cache_dir, ec)) {
    if (const auto cached = existing_in(true)) return {*cached, false, notes};
  }
  const auto [nsys, nsys_version] = nsys_for(report, settings);
  // Where nsys can export chosen tables (2023.4), only those nsel reads: 3.6x faster on the SC22
  // captures (bench/report_gpu_captures.sh). Under a name of its own, so that `nsys stats` on the
  // report, which reuses <stem>.sqlite, never meets an export lacking its tables.
  const auto version = parse_nsys_version(nsys_version);
  const bool only_tables = version && nsys_behaviour(*version).export_tables;
  if (settings.exporting) settings.exporting(report);
  while (true) {
    const fs::path base = base_in(in_cache);
    const fs::path target =
        fs::path(base.string() + (only_tables ? std::string(kTablesExportSuffix) : ".sqlite"));
    const fs::path kept_log = fs::path(base.string() + std::string(kExportLogSuffix));
    // One temporary per target and process is enough: the reports a run exports are distinct
    // files, so no two of its threads ever write the same target. Its name is hidden and does
    // not end in .sqlite, so no finder takes it for a report.
    const fs::path temporary = temporary_sibling(target);
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
    // nsys's own lines (its progress bar, "Generating ...") go to a log, never to nsel's
    // output: shown with -v, and kept beside the export when nsys fails. Hidden while nsys
    // writes it.
    const fs::path log = fs::path(temporary.string() + ".log");
    fs::remove(log, ec);  // anything planted there (a link) is not written through
    // A stop signal (StopCleanup, set up by the caller) ends nsys and removes its output, until
    // the export has its final name: nsys may end just before the signal, and the temporary is
    // still there while it is checked and renamed.
    const RemovedOnStop remove_on_stop(temporary);
    const RemovedOnStop remove_log_on_stop(log);
    const int code = run_quietly_stoppable(command, log);
    const std::string said = read_small_file(log).value_or("");
    if (settings.nsys_output) settings.nsys_output(report, said);
    if (code != 0 || !is_complete_export(temporary)) {
      fs::remove(temporary, ec);
      const fs::path written_in = target.parent_path();
      if (export_lacked_space(written_in, size, said)) {
        fs::remove(log, ec);
        // The report's folder is full: the private cache may have room.
        if (!in_cache) {
          try {
            prepare_export_cache(settings.cache_dir);
            in_cache = true;
            continue;
          } catch (const Error&) {
          }
        }
        throw ExportNoSpace(
            quote(report.string()) + ": not exported for want of space: " +
                quote(written_in.string()) + " has " + free_space_text(written_in) +
                ", less than its export needs (" + std::to_string(size / 1024) +
                " KiB report); the report itself was not judged: free space "
                "there, or give the export another folder (report --cache-dir, or XDG_CACHE_HOME)",
            1);
      }
      std::error_code kept;
      fs::rename(log, kept_log, kept);  // a rename replaces a link there, never follows it
      if (kept) fs::remove(log, ec);
      const std::string last = last_output_line(said);
      const std::optional<int> signal = signal_of_exit_status(code);
      if (signal && *signal != SIGTERM && *signal != SIGINT) {
        // Killed from outside: a limit or the system, not the report. Said as such.
        throw Error(quote(report.string()) + ": not exported: nsys " + nsys_version +
                        " export was " + killed_text(code) +
                        (*signal == SIGXFSZ ? ", a file-size limit (ulimit -f) below what the "
                                              "export writes: raise it, or export elsewhere "
                                              "(report --cache-dir)"
                                            : std::string()) +
                        "; the report itself was not judged",
                    1);
      }
      throw Error(quote(report.string()) + ": not a readable Nsight Systems report (nsys " +
                      nsys_version + " export " +
                      (code != 0 ? "exited with " + std::to_string(code)
                                 : std::string("left no complete export")) +
                      (last.empty() ? "" : ": " + quote(terminal_text(last, 300))) +
                      (kept ? "" : "; its output: " + quote(kept_log.string())) + ")",
                  1);
    }
    fs::remove(log, ec);
    fs::remove(kept_log, ec);  // a failure's log, now answered
    try {
      commit_file(temporary, target);
    } catch (const Error& e) {
      throw Error(quote(report.string()) + ": " + e.what(), 1);
    }
    // After the export, never before: a record left without its export (a crash between the
    // two) would vouch for an older one. Without the record the export is merely made again.
    try {
      write_file_atomically(source_record(target), fingerprint);
    } catch (const std::exception&) {
    }
    return {target, true, notes};
  }
}

}  // namespace nsel
