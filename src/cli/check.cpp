// nsel check: the verdict of a run, for every selected process, with its exit code.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/values.hpp"
#include "nsel/workflow/check_run.hpp"

namespace nsel::cli {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct CheckOptions {
  bool json = false;
  bool files_only = false;
  std::string expect_text;
  std::vector<std::string> roots;
};

constexpr Verdict kAllVerdicts[] = {Verdict::ok,
                                    Verdict::never_started,
                                    Verdict::killed_before_window,
                                    Verdict::killed_in_window,
                                    Verdict::window_not_reached,
                                    Verdict::lost_steps,
                                    Verdict::empty,
                                    Verdict::writing,
                                    Verdict::qdstrm,
                                    Verdict::missing,
                                    Verdict::unreadable};

Json text_or_null(const std::string& text) {
  return text.empty() ? Json(nullptr) : Json(text);
}

Json to_json(const RunCheck& check) {
  Json out;
  out["nsel_check"] = 1;
  out["roots"] = check.roots;
  out["session"] = text_or_null(check.session);
  out["session_path"] = text_or_null(check.session_path.string());
  out["session_started"] = text_or_null(check.session_started);
  out["sessions"] = check.sessions;
  out["processes"] = check.processes;
  out["expected"] = check.expected ? Json(*check.expected) : Json(nullptr);
  out["never_started"] = check.never_started;
  Json counts = Json::object();
  for (Verdict v : kAllVerdicts) counts[std::string(to_string(v))] = check.count(v);
  out["counts"] = counts;
  out["exit_code"] = check.exit_code();
  Json notes = Json::array();
  for (const DiscoveryNote& note : check.notes) {
    notes.push_back(
        {{"root", note.root}, {"kind", note.kind}, {"path", note.path}, {"message", note.message}});
  }
  out["notes"] = notes;
  out["unreadable_folders"] = check.unreadable_folders();
  Json reports = Json::array();
  for (const CheckedReport& c : check.reports) {
    const FoundReport& r = c.found;
    Json item;
    item["path"] = r.path.string();
    item["verdict"] = std::string(to_string(c.verdict));
    item["reason"] = text_or_null(c.reason);
    item["state"] = std::string(to_string(r.state));
    item["worker"] = text_or_null(r.worker);
    item["window"] = text_or_null(r.window);
    item["pid"] = r.pid != 0 ? Json(r.pid) : Json(nullptr);
    item["rank"] = r.rank ? Json(*r.rank) : Json(nullptr);
    item["node"] = text_or_null(r.node);
    item["session"] = text_or_null(r.session);
    item["exit_status"] = c.exit_status ? Json(*c.exit_status) : Json(nullptr);
    item["window_steps"] = c.window_steps;
    item["steps"] = c.steps ? Json(*c.steps) : Json(nullptr);
    item["cut_steps"] = c.cut_steps;
    item["bytes"] = r.bytes;
    item["manifest"] = r.manifest ? Json(r.manifest->string()) : Json(nullptr);
    reports.push_back(item);
  }
  out["reports"] = reports;
  return out;
}

void print_table(const RunCheck& check, const std::vector<fs::path>& searched) {
  const std::string where = joined_paths(searched);
  const std::string started =
      check.session_started.empty() ? "" : ", started " + check.session_started;
  if (!check.session.empty()) {
    std::printf("Checking %s (the newest session under %s%s)\n", shown(check.session).c_str(),
                where.c_str(), started.c_str());
  } else {
    std::printf("Checking %s\n", where.c_str());
  }
  for (const DiscoveryNote& note : check.notes) {
    std::printf("  note: %s\n", shown(note.message).c_str());
  }
  std::size_t verdict_width = 7;
  std::size_t worker_width = 6;
  for (const CheckedReport& c : check.reports) {
    verdict_width = std::max(verdict_width, to_string(c.verdict).size());
    worker_width = std::max(worker_width, cell(c.found.worker).size());
  }
  if (!check.reports.empty()) {
    std::printf("  %-*s  %-*s  %-7s  %-5s  %-8s  %s\n", static_cast<int>(verdict_width), "VERDICT",
                static_cast<int>(worker_width), "WORKER", "WINDOW", "RANK", "PID", "WHY");
  }
  for (const CheckedReport& c : check.reports) {
    const FoundReport& r = c.found;
    std::printf("  %-*s  %-*s  %-7s  %-5s  %-8s  %s\n", static_cast<int>(verdict_width),
                std::string(to_string(c.verdict)).c_str(), static_cast<int>(worker_width),
                cell(r.worker).c_str(), cell(r.window).c_str(),
                r.rank ? std::to_string(*r.rank).c_str() : "-",
                r.pid != 0 ? std::to_string(r.pid).c_str() : "-",
                shown(c.reason.empty() ? r.path.filename().string() : c.reason).c_str());
  }
  if (check.never_started > 0) {
    std::printf("  %-*s  %lld selected process(es) expected but never started (no manifest)\n",
                static_cast<int>(verdict_width), "never_started", check.never_started);
  }
  std::string summary;
  for (Verdict v : kAllVerdicts) {
    const std::size_t n = check.count(v) + (v == Verdict::never_started ? check.never_started : 0);
    if (n > 0)
      summary +=
          (summary.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(to_string(v));
  }
  const int code = check.exit_code();
  std::string expected;
  if (check.expected) {
    expected = ", " + std::to_string(*check.expected) + " expected";
  }
  // A folder that cannot be read may hold reports: named, and never OK.
  std::string unread;
  for (const std::string& folder : check.unreadable_folders()) {
    unread += (unread.empty() ? "; cannot read " : ", ") + shown(folder);
  }
  if (check.reports.empty()) {
    if (!check.session.empty()) {
      std::printf(
          "Verdict: FAILED: the newest session, %s%s, left no report or manifest (an older "
          "session is not judged in its place)%s\n",
          shown(check.session).c_str(), started.c_str(), unread.c_str());
    } else {
      std::printf("Verdict: FAILED: no report or manifest found under %s%s\n", where.c_str(),
                  unread.c_str());
    }
    return;
  }
  summary += unread;
  std::printf("Verdict: %s: %zu report(s) of %zu process(es)%s: %s\n",
              code == 0   ? "OK"
              : code == 3 ? "NOT YET (still being written; check again)"
                          : "FAILED",
              check.reports.size(), check.processes, expected.c_str(), summary.c_str());
}

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
      "Complete reports are exported once (cached, as 'nsel report' does) to read their\n"
      "'step <n>' NVTX ranges; --files-only skips that (names and sizes only, as 'nsel ls').\n"
      "Exit status: 0 all ok (and --expect processes found); 1 any missing or wrong, a folder\n"
      "that cannot be read, or none found; 3 none wrong but some still being written (check\n"
      "again); 2 bad input.\n"
      "--json prints one object: nsel_check (format version 1), roots, session,\n"
      "session_path, session_started, sessions, processes, expected, never_started, counts,\n"
      "exit_code, notes, unreadable_folders, reports (path, verdict,\n"
      "reason, state, worker, window, pid, rank, node, session, exit_status, window_steps,\n"
      "steps, cut_steps, bytes, manifest); see docs/reports.md.\n"
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
    for (const std::string& root : options->roots) {
      std::error_code ec;
      if (!fs::is_directory(root, ec)) {
        throw Error(bad_value("ROOT", root, "no such folder",
                              "a folder holding reports: a Ray temp folder such as /tmp/ray, a "
                              "SLURM log folder, or any folder"));
      }
      request.roots.emplace_back(root);
    }
    if (!options->expect_text.empty()) {
      request.expect = parse_whole_number(options->expect_text, "--expect", 1, 1000000000);
    }
    request.read_steps = !options->files_only;
    const RunCheck result = check_run(request);
    if (options->json) {
      std::printf(
          "%s\n",
          to_json(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      std::vector<fs::path> searched;
      for (const std::string& root : result.roots) searched.emplace_back(root);
      if (searched.empty())
        searched = request.roots.empty() ? default_report_roots() : request.roots;
      print_table(result, searched);
    }
    return result.exit_code();
  };
}

}  // namespace nsel::cli
