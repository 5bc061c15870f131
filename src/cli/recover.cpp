// nsel recover: turn the .qdstrm files nsys left behind into reports.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/render/recover.hpp"
#include "nsel/reports/discovery.hpp"
#include "nsel/sys/process.hpp"
#include "nsel/workflow/recover_reports.hpp"

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
    std::vector<fs::path> roots = report_roots(options->roots);
    if (roots.empty()) roots = default_report_roots();
    std::optional<fs::path> importer;
    if (!options->importer.empty()) {
      if (access(options->importer.c_str(), X_OK) != 0) {
        throw Error(bad_value("--importer", options->importer, "not an executable file",
                              "the path of Nsight Systems' QdstrmImporter"));
      }
      importer = options->importer;
    }
    RecoverRequest request;
    request.roots = std::move(roots);
    request.importer = importer;
    request.keep_qdstrm = options->keep;
    request.path_variable = environment_variable("PATH").value_or("");
    request.nsys_variable = environment_variable("NSEL_NSYS");
    const RecoverOutcome outcome = recover_reports(
        request,
        [](const fs::path& file, const std::string& message) {
          std::fputs(render_recover_file_text(file, message).c_str(), stdout);
        },
        [](const fs::path& qdstrm, const std::string& problem) {
          std::fputs(render_recover_left_as_is_text(qdstrm, problem).c_str(), stdout);
        });
    if (outcome.qdstrm_files > 0) {
      std::fputs(
          render_recover_summary_text(outcome.converted, outcome.failed, outcome.used).c_str(),
          stdout);
    } else if (!outcome.named_any && outcome.refused == 0) {
      std::fputs(render_recover_nothing_text().c_str(), stdout);
    }
    return outcome.exit_code();
  };
}

}  // namespace nsel::cli
