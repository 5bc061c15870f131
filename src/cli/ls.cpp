// nsel ls: every report, .qdstrm and manifest under the roots, grouped, with its state.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/render/json_text.hpp"
#include "nsel/render/ls.hpp"
#include "nsel/reports/discovery.hpp"

namespace nsel::cli {
namespace {

namespace fs = std::filesystem;

struct LsOptions {
  bool json = false;
  std::vector<std::string> roots;
};

}  // namespace

Action add_ls(CLI::App& app) {
  auto options = std::make_shared<LsOptions>();
  CLI::App* ls = app.add_subcommand(
      "ls",
      "List every report under ROOT... (default: /tmp/ray and <temp>/nsel-demo): Ray sessions\n"
      "(session_[0-9]* and session_latest, counted once; a session_latest that is not the\n"
      "newest session is noted), plain folders, and synced SLURM logs\n"
      "(<job>-logs/ray/[<node>/]<session>/logs/nsight/). For each: worker, step window, rank,\n"
      "PID, node, size and state. Names and file sizes/times are all it reads (no report is "
      "opened):\n"
      "  complete  a .nsys-rep, unchanged for 30 s or finished according to its manifest\n"
      "  empty     smaller than 4 KiB, or a vLLM generation worker's report beside\n"
      "            worker_process_<PID> reports (model parallelism: the profile is in those)\n"
      "  writing   changed in the last 30 s, or its manifest says nsys still runs\n"
      "  qdstrm    only a .qdstrm is left: 'nsel recover' turns it into a report\n"
      "  running   a manifest, no file yet: the profiled process still runs\n"
      "  missing   a manifest says nsys wrote no report (or nsel was killed)\n"
      "Worker, window and PID come from the manifest (<stem>.nsel.json) when there is one,\n"
      "else from the file name (<worker>_<start>:<stop>_<PID>, worker_process_<PID>); rank\n"
      "and local rank from the manifest's RANK, SLURM_PROCID, ... (LOCAL_RANK, SLURM_LOCALID,\n"
      "...). The node is the synced layout's node folder, else the manifest's SLURMD_NODENAME,\n"
      "else its host.\n"
      "--json prints one object: schema (" +
          std::string(kLsJsonSchema) +
          "), nsel_ls (format version 1), roots, sessions, counts,\n"
          "notes, reports (path, state, reason, worker, window, pid, rank, local_rank, node, "
          "session, job,\n"
          "root, bytes, modified, manifest, qdstrm, verdict, verdict_reason; null when unknown);\n"
          "see docs/reports.md. VERDICT is 'nsel check's, from the files alone.\n"
          "Usage: nsel ls [--json] [ROOT...]");
  ls->add_flag("--json", options->json, "print one JSON object (stable; see docs/reports.md)");
  ls->add_option("ROOT", options->roots, "folders to search (default: /tmp/ray, <temp>/nsel-demo)");

  return [options](const std::vector<std::string>& trailing) -> int {
    if (!trailing.empty()) throw Error("nsel ls takes no PROGRAM; see 'nsel ls --help'");
    std::vector<fs::path> roots = report_roots(options->roots);
    if (roots.empty()) roots = default_report_roots();
    const ListedReports listed = list_reports(discover_reports(roots));
    if (options->json) {
      std::printf("%s\n", json_text(render_ls_json(listed), JsonLayout::document).c_str());
    } else {
      std::fputs(render_ls_text(listed, roots).c_str(), stdout);
    }
    return 0;
  };
}

}  // namespace nsel::cli
