// nsel recover: turn the .qdstrm files nsys left behind into reports.
#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/reports/discovery.hpp"
#include "nsel/reports/recovery.hpp"

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
      "Systems' QdstrmImporter (on PATH, beside nsys, or in the usual install folders). The\n"
      "importer works on a hidden copy, the report appears under its final name only when\n"
      "complete, an existing report is never replaced, and the .qdstrm is removed after a\n"
      "successful conversion (unless --keep-qdstrm). A .qdstrm still being written (changed in\n"
      "the last 30 s) is left alone. Exit code 1 when any conversion failed.\n"
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
    for (const FoundReport& r : found.reports) {
      if (r.state == ReportState::qdstrm && r.qdstrm) leftovers.push_back(*r.qdstrm);
    }
    if (leftovers.empty()) {
      std::printf("No left-over .qdstrm files.\n");
      return 0;
    }
    if (!importer) importer = find_qdstrm_importer(environment_variable("PATH").value_or(""));
    if (!importer) {
      throw Error("found " + std::to_string(leftovers.size()) +
                      " .qdstrm file(s) but no QdstrmImporter; install Nsight Systems or give "
                      "--importer PATH (Debian: /usr/lib/nsight-systems/host-linux-x64)",
                  1);
    }
    int failed = 0;
    for (const fs::path& qdstrm : leftovers) {
      const Recovery done = recover_qdstrm(qdstrm, *importer, options->keep);
      if (!done.converted) ++failed;
      std::printf("%s: %s\n", qdstrm.c_str(), done.message.c_str());
    }
    std::printf("%zu converted, %d left as they were (importer: %s)\n", leftovers.size() - failed,
                failed, importer->c_str());
    return failed == 0 ? 0 : 1;
  };
}

}  // namespace nsel::cli
