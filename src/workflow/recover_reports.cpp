#include "nsel/workflow/recover_reports.hpp"

#include <map>

#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/reports/discovery.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/nsys_installs.hpp"

namespace nsel {
namespace fs = std::filesystem;

RecoverOutcome recover_reports(const RecoverRequest& request, const RecoverFileDone& file_done,
                               const RecoverNoImporter& no_importer) {
  RecoverOutcome out;
  const Discovery found = discover_reports(request.roots);
  std::vector<fs::path> leftovers;
  // The .qdstrm a manifest says nsys left elsewhere ($TMPDIR), for the report it names.
  std::map<fs::path, fs::path> report_for;
  for (const FoundReport& r : found.reports) {
    if (r.state == ReportState::qdstrm && r.qdstrm) leftovers.push_back(*r.qdstrm);
    if (r.state != ReportState::missing || !r.manifest || !r.manifest_content) continue;
    const Manifest& given = *r.manifest_content;
    if (const auto problem = manifest_paths_problem(*r.manifest, given)) {
      ++out.refused;
      file_done(*r.manifest, "left as is: it " + *problem);
      continue;
    }
    const Manifest m = confined_to_folder(given, *r.manifest);
    // A whole report left under its hidden name, every name being taken when its run ended.
    if (m.state == kManifestNameTaken && m.pid != 0) {
      const Naming naming = name_report_left_hidden(*r.manifest, m);
      out.named_any = true;
      if (!naming.named) ++out.names_failed;
      file_done(m.report, naming.message);
      continue;
    }
    // A report nsys wrote under its launch's hidden name, its launcher killed before it
    // could give the report its own name: renamed, nothing to convert.
    if (const auto unnamed = unnamed_report_of(m)) {
      const Naming naming = name_unnamed_report(m);
      out.named_any = true;
      if (!naming.named) ++out.names_failed;
      file_done(*unnamed, naming.message);
      continue;
    }
    // (A whole report nsys left there instead needs no conversion: the manifest names it.)
    std::error_code ec;
    if (m.qdstrm && m.qdstrm->ends_with(".qdstrm") && !m.report.empty() &&
        fs::is_regular_file(*m.qdstrm, ec) && !fs::exists(m.report, ec)) {
      leftovers.push_back(*m.qdstrm);
      report_for[*m.qdstrm] = m.report;
    }
  }
  out.qdstrm_files = leftovers.size();
  if (leftovers.empty()) return out;
  std::vector<NsysInstall> installs;
  if (!request.importer)
    installs = find_nsys_installs(request.nsys_variable, request.path_variable);
  for (const fs::path& qdstrm : leftovers) {
    // Each file needs the importer of the version that wrote it.
    ImporterChoice choice;
    if (request.importer) {
      choice.importer = request.importer;
    } else {
      choice = choose_qdstrm_importer(qdstrm, installs, request.path_variable);
    }
    if (!choice.importer) {
      if (leftovers.size() == 1) throw Error(choice.problem, 1);
      ++out.failed;
      no_importer(qdstrm, choice.problem);
      continue;
    }
    const auto target = report_for.find(qdstrm);
    const Recovery done = recover_qdstrm(
        qdstrm, *choice.importer, request.keep_qdstrm,
        target == report_for.end() ? std::nullopt : std::optional<fs::path>(target->second));
    if (done.converted) {
      ++out.converted;
    } else {
      ++out.failed;
    }
    file_done(qdstrm, done.message);
    out.used.push_back(choice);
  }
  return out;
}

}  // namespace nsel
