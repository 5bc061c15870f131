#include "nsel/reports/recovery.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/core/nsys_install.hpp"
#include "nsel/core/terminal_text.hpp"
#include "nsel/reports/report_version.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/nsys_installs.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {
namespace fs = std::filesystem;

std::optional<fs::path> find_qdstrm_importer(const std::vector<NsysInstall>& installs,
                                             std::string_view path_variable) {
  if (auto found = find_program("QdstrmImporter", path_variable)) return fs::path(*found);
  for (const NsysInstall& install : installs) {
    if (auto importer = importer_of(install)) return fs::path(*importer);
  }
  return std::nullopt;
}

ImporterChoice choose_qdstrm_importer(const fs::path& qdstrm,
                                      const std::vector<NsysInstall>& installs,
                                      std::string_view path_variable) {
  ImporterChoice choice;
  const auto writer = report_writer_version(qdstrm);
  if (!writer) {
    choice.importer = find_qdstrm_importer(installs, path_variable);
    if (!choice.importer) {
      choice.problem =
          "no QdstrmImporter found; install Nsight Systems or give --importer PATH "
          "(Debian: /usr/lib/nsight-systems/host-linux-x64)";
    }
    return choice;
  }
  // Only installs that have their importer can convert.
  std::vector<NsysInstall> with_importer;
  std::vector<fs::path> importers;
  for (const NsysInstall& install : installs) {
    if (auto importer = importer_of(install)) {
      with_importer.push_back(install);
      importers.push_back(fs::path(*importer));
    }
  }
  const auto chosen = choose_nsys(with_importer, writer, NsysFileKind::qdstrm);
  if (!chosen) {
    choice.problem = no_nsys_for(quote(qdstrm.string()), *writer, NsysFileKind::qdstrm,
                                 with_importer.empty() ? installs : with_importer);
    return choice;
  }
  choice.importer = importers[*chosen];
  choice.version = with_importer[*chosen].version.text;
  return choice;
}

Recovery recover_qdstrm(const fs::path& qdstrm, const fs::path& importer, bool keep_qdstrm,
                        const std::optional<fs::path>& report) {
  Recovery result;
  result.qdstrm = qdstrm;
  result.report = report ? *report : qdstrm.parent_path() / (qdstrm.stem().string() + ".nsys-rep");
  std::error_code ec;
  if (fs::exists(result.report, ec)) {
    result.message = "left as is: " + result.report.filename().string() + " already exists";
    return result;
  }
  // The importer rewrites its input and names its output after it: both get hidden names, so
  // nothing under a final name is ever partial and the original survives a failure.
  const std::string hidden =
      "." + qdstrm.stem().string() + ".nsel-recover-" + std::to_string(::getpid());
  const fs::path work = qdstrm.parent_path() / (hidden + ".qdstrm");
  const fs::path produced = qdstrm.parent_path() / (hidden + ".nsys-rep");
  const fs::path log = temporary_folder() / (hidden.substr(1) + ".log");
  const auto clean = [&] {
    std::error_code ignored;
    fs::remove(work, ignored);
    fs::remove(produced, ignored);
    fs::remove(log, ignored);
  };
  fs::copy_file(qdstrm, work, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    result.message = "cannot copy it to work on: " + ec.message();
    clean();
    return result;
  }
  const LoggedRun run = run_logged({importer.string(), "-i", work.string()}, log);
  if (run.exit_code < 0) {
    result.message = "cannot run " + importer.string() + ": " + run.problem;
    clean();
    return result;
  }
  const int code = run.exit_code;
  if (code != 0 || !fs::is_regular_file(produced, ec)) {
    const std::string said = last_output_line(read_small_file(log).value_or(""));
    result.message = "the importer failed (exit code " + std::to_string(code) + ")" +
                     (said.empty() ? "" : ": " + said) + "; left as is";
    clean();
    return result;
  }
  // The report is as old as the profile it holds (and so is not taken for one being written).
  struct stat original {};
  if (::stat(qdstrm.c_str(), &original) == 0) {
    const timespec times[2] = {original.st_atim, original.st_mtim};
    ::utimensat(AT_FDCWD, produced.c_str(), times, 0);
  }
  // link() never replaces: a report that appeared meanwhile wins over ours. Another file
  // system (a manifest's report for a .qdstrm in $TMPDIR) gets a hidden copy first.
  const fs::path copy = result.report.parent_path() / (hidden + ".nsys-rep");
  int error = ::link(produced.c_str(), result.report.c_str()) == 0 ? 0 : errno;
  if (error == EXDEV) {
    fs::copy_file(produced, copy, fs::copy_options::overwrite_existing, ec);
    error = ec ? ec.value() : (::link(copy.c_str(), result.report.c_str()) == 0 ? 0 : errno);
    std::error_code ignored;
    fs::remove(copy, ignored);
  }
  if (error != 0) {
    result.message =
        "left as is: cannot create " + result.report.string() + ": " + std::strerror(error);
    clean();
    return result;
  }
  clean();
  result.converted = true;
  result.message =
      "converted to " + (report ? result.report.string() : result.report.filename().string());
  if (!keep_qdstrm) {
    fs::remove(qdstrm, ec);
    if (ec) result.message += " (the .qdstrm stays: " + ec.message() + ")";
  }
  return result;
}

namespace {

// The launch's -o value in the manifest's command, with %p and %% as nsys expands them (nsel's
// hidden names hold only those, never %h or %q{}); empty without one.
std::string expanded_output(const Manifest& manifest) {
  const auto o = std::find(manifest.command.begin(), manifest.command.end(), "-o");
  if (o == manifest.command.end() || o + 1 == manifest.command.end()) return "";
  std::string name;
  const std::string& output = *(o + 1);
  for (std::size_t i = 0; i < output.size(); ++i) {
    if (output[i] == '%' && i + 1 < output.size() && output[i + 1] == 'p') {
      name += std::to_string(manifest.pid);
      ++i;
    } else if (output[i] == '%' && i + 1 < output.size() && output[i + 1] == '%') {
      name += '%';
      ++i;
    } else {
      name += output[i];
    }
  }
  return name;
}

}  // namespace

std::optional<fs::path> unnamed_report_of(const Manifest& manifest) {
  if (manifest.pid == 0 || manifest.report.empty()) return std::nullopt;
  std::string name = expanded_output(manifest);
  if (name.empty()) return std::nullopt;
  if (!name.ends_with(".nsys-rep")) name += ".nsys-rep";
  const fs::path hidden(name);
  if (!hidden.filename().string().starts_with(".") || hidden == fs::path(manifest.report)) {
    return std::nullopt;  // nsys wrote under the final name itself
  }
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(hidden, ec))) return std::nullopt;
  return hidden;
}

std::optional<fs::path> intended_report_name(const Manifest& manifest) {
  if (manifest.pid == 0) return std::nullopt;
  const fs::path hidden(expanded_output(manifest));
  const std::string name = hidden.filename().string();
  const std::size_t tag = name.rfind('.');
  if (!name.starts_with(".") || tag == std::string::npos || tag <= 1) return std::nullopt;
  return hidden.parent_path() / (name.substr(1, tag - 1) + ".nsys-rep");
}

Naming name_report_left_hidden(const fs::path& manifest_path, const Manifest& manifest) {
  Naming out;
  const auto wanted = intended_report_name(manifest);
  const fs::path hidden(manifest.report);
  struct stat left {};
  if (!wanted || !hidden.filename().string().starts_with(".") ||
      ::lstat(hidden.c_str(), &left) != 0 || !S_ISREG(left.st_mode)) {
    out.message = "left as is: the report it names, " + quote(manifest.report) +
                  ", is not there under its hidden name";
    return out;
  }
  // What another user put under that name is never given a report's name as nsel's own.
  if (left.st_uid != ::geteuid()) {
    out.message = "left as is: the report it names, " + quote(manifest.report) +
                  ", is another user's (uid " + std::to_string(left.st_uid) + "): not named";
    return out;
  }
  for (int k = 1; k <= kReportNameVariants; ++k) {
    const fs::path report = report_name_variant(*wanted, k);
    const auto claimed = files_claiming_report_name(report);
    if (std::any_of(claimed.begin(), claimed.end(),
                    [](const fs::path& file) { return anything_at(file); })) {
      continue;
    }
    const int error = rename_no_replace(hidden, report);
    if (error == EEXIST) continue;
    if (error != 0) {
      out.message =
          "left as is: cannot name it " + quote(report.string()) + ": " + std::strerror(error);
      return out;
    }
    out.named = true;
    out.message = "named " + report.string();
    // Its manifest now says what it holds, under the report's own manifest name.
    Manifest named = manifest;
    named.report = report.string();
    named.state = std::string(kManifestComplete);
    named.reason =
        "named by 'nsel recover': every name the report could take was another "
        "file's when its run ended";
    try {
      write_file_atomically(manifest_path, serialize_manifest(named));
      if (rename_no_replace(manifest_path, manifest_path_for(report)) != 0) {
        out.message += " (its manifest stays " + quote(manifest_path.string()) + ")";
      }
    } catch (const Error& e) {
      out.message += std::string(" (its manifest still says name_taken: ") + e.what() + ")";
    }
    return out;
  }
  out.message = "left as is: every name it may take (" + wanted->filename().string() +
                " and its -2 to -" + std::to_string(kReportNameVariants) +
                " variants) is still another file's";
  return out;
}

Naming name_unnamed_report(const Manifest& manifest) {
  Naming out;
  const auto hidden = unnamed_report_of(manifest);
  if (!hidden) return out;
  const int error = rename_no_replace(*hidden, manifest.report);
  out.named = error == 0;
  out.message = out.named
                    ? "named " + manifest.report
                    : "left as is: cannot name it " + manifest.report + ": " + std::strerror(error);
  return out;
}

std::optional<std::string> manifest_paths_problem(const fs::path& manifest_path,
                                                  const Manifest& manifest) {
  struct stat own {};
  if (::lstat(manifest_path.c_str(), &own) != 0) {
    return std::string("cannot be looked at: ") + std::strerror(errno);
  }
  if (own.st_uid != ::geteuid()) {
    return "is another user's (uid " + std::to_string(own.st_uid) +
           "): the files it names are not followed";
  }
  if (!manifest.report.empty() &&
      !fs::path(manifest.report).filename().string().ends_with(".nsys-rep")) {
    return "names " + quote(manifest.report) +
           " as its report, which is no report's name (.nsys-rep): not followed";
  }
  if (manifest.qdstrm) {
    struct stat left {};
    if (::lstat(manifest.qdstrm->c_str(), &left) == 0 &&
        (!S_ISREG(left.st_mode) || left.st_uid != ::geteuid())) {
      return "names " + quote(*manifest.qdstrm) +
             " as its capture, which is not a file of yours: not followed";
    }
  }
  return std::nullopt;
}

Manifest confined_to_folder(const Manifest& manifest, const fs::path& manifest_path) {
  const fs::path folder =
      manifest_path.has_parent_path() ? manifest_path.parent_path() : fs::path(".");
  Manifest confined = manifest;
  if (!confined.report.empty()) {
    confined.report = (folder / fs::path(confined.report).filename()).string();
  }
  const auto o = std::find(confined.command.begin(), confined.command.end(), "-o");
  if (o != confined.command.end() && o + 1 != confined.command.end()) {
    *(o + 1) = (folder / fs::path(*(o + 1)).filename()).string();
  }
  return confined;
}

}  // namespace nsel
