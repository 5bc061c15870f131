// nsel check: the verdict of a run, for every selected process, with its exit code.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/values.hpp"
#include "nsel/render/check.hpp"
#include "nsel/render/json_text.hpp"
#include "nsel/workflow/check_run.hpp"

namespace nsel::cli {
namespace {

namespace fs = std::filesystem;

struct CheckOptions {
  bool json = false;
  bool files_only = false;
  std::string expect_text;
  std::vector<std::string> roots;
};

}  // namespace

Action add_check(CLI::App& app) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* check = app.add_subcommand(
      "check",
      "Say whether every capture of a run worked: for every selected process (the manifests\n"
      "'nsel exec' wrote) whether its report exists, is complete and holds the steps of its\n"
      "window, and why not. Without ROOT: the newest session under /tmp/ray and\n"
      "<temp>/nsel-demo; with ROOT...: everything under them, as 'nsel ls' finds it.\n"
      "Verdicts:\n"
      "  ok                    a complete report holding every step of its window\n"
      "  never_started         expected (--expect) but no manifest, or the program never began\n"
      "  killed_before_window  killed by a signal before its window opened: no report\n"
      "  killed_in_window      killed inside its window: the report lacks the later steps\n"
      "  window_not_reached    the program ended before its window (or before its end)\n"
      "  lost_steps            NVTX capture, yet the report holds no NVTX event (nsys lost them)\n"
      "  empty                 a report too small to hold a profile (0 bytes, cut short)\n"
      "  writing               still being written, or the process still runs\n"
      "  qdstrm                only a .qdstrm left: 'nsel recover' turns it into a report\n"
      "  missing               nsys wrote no report for another reason (exit status given)\n"
      "  unreadable            nsys cannot export the report\n"
      "  not_exported          no room to export it: its steps were not read (it may be fine)\n"
      "Complete reports are exported once (cached, as 'nsel report' does) to read their\n"
      "'step <n>' NVTX ranges; --files-only skips that (names and sizes only, as 'nsel ls').\n"
      "Exit status: 0 all ok (and --expect processes found); 1 any missing or wrong, a folder\n"
      "that cannot be read, or none found; 3 none wrong but some still being written (check\n"
      "again); 2 bad input.\n"
      "--json prints one object: schema (" +
          std::string(kCheckJsonSchema) +
          "), nsel_check (format version 1), roots,\n"
          "session, session_path, session_started, sessions, processes, expected, never_started,\n"
          "counts, exit_code, notes, unreadable_folders, reports (path, verdict, reason, state,\n"
          "worker, window, pid, rank, node, session, exit_status, window_steps, steps, cut_steps,\n"
          "bytes, manifest); see docs/reports.md.\n"
          "Usage: nsel check [--json] [--expect N] [--files-only] [ROOT...]");
  check->add_flag("--json", options->json, "print one JSON object (stable; see docs/reports.md)");
  check
      ->add_option("--expect", options->expect_text,
                   "the number of selected processes the run has; fewer found: never_started")
      ->type_name("N");
  check->add_flag("--files-only", options->files_only,
                  "judge by names, sizes and manifests only; do not open the reports");
  check->add_option("ROOT", options->roots,
                    "folders to search (default: the newest session under /tmp/ray, "
                    "<temp>/nsel-demo)");

  return [options](const std::vector<std::string>& trailing) -> int {
    if (!trailing.empty()) throw Error("nsel check takes no PROGRAM; see 'nsel check --help'");
    CheckRequest request;
    request.roots = report_roots(options->roots);
    if (!options->expect_text.empty()) {
      request.expect = parse_whole_number(options->expect_text, "--expect", 1, 1000000000);
    }
    request.read_steps = !options->files_only;
    const RunCheck result = check_run(request);
    if (options->json) {
      std::printf("%s\n", json_text(render_check_json(result), JsonLayout::document).c_str());
    } else {
      std::vector<fs::path> searched;
      for (const std::string& root : result.roots) searched.emplace_back(root);
      if (searched.empty())
        searched = request.roots.empty() ? default_report_roots() : request.roots;
      std::fputs(render_check_text(result, searched).c_str(), stdout);
    }
    return result.exit_code();
  };
}

}  // namespace nsel::cli
