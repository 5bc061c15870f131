// nsel recover: turn the .qdstrm files nsys left behind into reports.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/render/recover.hpp"
#include "nsel/reports/discovery.hpp"
#include "nsel/reports/recovery.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/nsys_installs.hpp"
#include "nsel/sys/process.hpp"

namespace nsel::cli {
namespace {

namespace fs = std::filesystem;

struct RecoverOptions {
  std::vector<std::string> roots;
  std::string importer;
  bool keep = false;
};

}  // namespace

Action add_recover(CLI::App& app) {
  auto options = std::make_shared<RecoverOptions>();
  CLI::App* recover = app.add_subcommand(
      "recover",
      "Turn every left-over .qdstrm under ROOT... (found as 'nsel ls' finds them; default:\n"
      "/tmp/ray and <temp>/nsel-demo) into the .nsys-rep nsys should have written, with Nsight\n"
      "Systems' QdstrmImporter of the version that wrote each file (read from the file), from\n"
      "the installs NSEL_NSYS names (a path of nsys, or several separated by ':'), else the nsys\n"
      "on PATH and the known install folders. The\n"
      "importer works on a hidden copy, the report appears under its final name only when\n"
      "complete, an existing report is never replaced, and the .qdstrm is removed after a\n"
      "successful conversion (unless --keep-qdstrm). A .qdstrm still being written (changed in\n"
      "the last 30 s) is left alone. A whole report left under its launch's hidden name (its\n"
      "nsel exec killed, or every name it could take another file's) gets its name. Exit code\n"
      "1 when any conversion or naming failed.\n"
      "Usage: nsel recover [--importer PATH] [--keep-qdstrm] [ROOT...]");
  recover->add_option("ROOT", options->roots, "folders to search");
  recover->add_option("--importer", options->importer, "the QdstrmImporter to use")
      ->type_name("PROGRAM");
  recover->add_flag("--keep-qdstrm", options->keep, "keep each .qdstrm after converting it");

  return [options](const std::vector<std::string>& trailing) -> int {
    if (!trailing.empty()) throw Error("nsel recover takes no PROGRAM; see 'nsel recover --help'");
    std::vector<fs::path> roots;
    for (const std::string& root : options->roots) {
      std::error_code ec;
      if (!fs::is_directory(root, ec)) {
        throw Error(
            bad_value("ROOT", root, "no such folder", "a folder holding reports, e.g. /tmp/ray"));
      }
      roots.emplace_back(root);
    }
    if (roots.empty()) roots = default_report_roots();
    std::optional<fs::path> importer;
    if (!options->importer.empty()) {
      if (access(options->importer.c_str(), X_OK) != 0) {
        throw Error(bad_value("--importer", options->importer, "not an executable file",
                              "the path of Nsight Systems' QdstrmImporter"));
      }
      importer = options->importer;
    }
    const Discovery found = discover_reports(roots);
    std::vector<fs::path> leftovers;
    // The .qdstrm a manifest says nsys left elsewhere ($TMPDIR), for the report it names.
    std::map<fs::path, fs::path> report_for;
    int unnamed_failed = 0;
    int refused = 0;  // manifests whose paths are not followed
    bool any_unnamed = false;
    for (const FoundReport& r : found.reports) {
      if (r.state == ReportState::qdstrm && r.qdstrm) leftovers.push_back(*r.qdstrm);
      if (r.state != ReportState::missing || !r.manifest) continue;
      try {
        const std::optional<std::string> text =
            read_capped_file(*r.manifest, kManifestReadCap).text;
        const Manifest given = parse_manifest(text.value_or(""), r.manifest->string());
        if (const auto problem = manifest_paths_problem(*r.manifest, given)) {
          ++refused;
          std::fputs(render_recover_file_text(*r.manifest, "left as is: it " + *problem).c_str(),
                     stdout);
          continue;
        }
        const Manifest m = confined_to_folder(given, *r.manifest);
        std::error_code ec;
        // A whole report left under its hidden name, every name being taken when its run ended.
        if (m.state == kManifestNameTaken && m.pid != 0) {
          const Naming naming = name_report_left_hidden(*r.manifest, m);
          any_unnamed = true;
          if (!naming.named) ++unnamed_failed;
          std::fputs(render_recover_file_text(m.report, naming.message).c_str(), stdout);
          continue;
        }
        // A report nsys wrote under its launch's hidden name, its launcher killed before it
        // could give the report its own name: renamed, nothing to convert.
        if (const auto unnamed = unnamed_report_of(m)) {
          const Naming naming = name_unnamed_report(m);
          any_unnamed = true;
          if (!naming.named) ++unnamed_failed;
          std::fputs(render_recover_file_text(*unnamed, naming.message).c_str(), stdout);
          continue;
        }
        // (A whole report nsys left there instead needs no conversion: the manifest names it.)
        if (m.qdstrm && m.qdstrm->ends_with(".qdstrm") && !m.report.empty() &&
            fs::is_regular_file(*m.qdstrm, ec) && !fs::exists(m.report, ec)) {
          leftovers.push_back(*m.qdstrm);
          report_for[*m.qdstrm] = m.report;
        }
      } catch (const Error&) {
        // An unreadable manifest names nothing to recover.
      }
    }
    if (leftovers.empty()) {
      if (!any_unnamed && refused == 0) {
        std::fputs(render_recover_nothing_text().c_str(), stdout);
      }
      return unnamed_failed + refused > 0 ? 1 : 0;
    }
    const std::string path = environment_variable("PATH").value_or("");
    std::vector<NsysInstall> installs;
    if (!importer) installs = find_nsys_installs(environment_variable("NSEL_NSYS"), path);
    int failed = 0;
    std::vector<ImporterChoice> used;
    for (const fs::path& qdstrm : leftovers) {
      // Each file needs the importer of the version that wrote it.
      ImporterChoice choice;
      if (importer) {
        choice.importer = importer;
      } else {
        choice = choose_qdstrm_importer(qdstrm, installs, path);
      }
      if (!choice.importer) {
        if (leftovers.size() == 1) throw Error(choice.problem, 1);
        ++failed;
        std::fputs(render_recover_left_as_is_text(qdstrm, choice.problem).c_str(), stdout);
        continue;
      }
      const auto target = report_for.find(qdstrm);
      const Recovery done = recover_qdstrm(
          qdstrm, *choice.importer, options->keep,
          target == report_for.end() ? std::nullopt : std::optional<fs::path>(target->second));
      if (!done.converted) ++failed;
      std::fputs(render_recover_file_text(qdstrm, done.message).c_str(), stdout);
      used.push_back(choice);
    }
    std::fputs(render_recover_summary_text(leftovers.size() - failed, failed, used).c_str(),
               stdout);
    return failed + unnamed_failed + refused == 0 ? 0 : 1;
  };
}

}  // namespace nsel::cli
