#include "nsel/workflow/check_run.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "nsel/analyze/exports.hpp"
#include "nsel/analyze/step_ranges.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/core/step_window.hpp"
#include "nsel/reports/layout.hpp"
#include "nsel/reports/report_identity.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/nsys_installs.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {
namespace {

namespace fs = std::filesystem;

// The steps the window asks for; several windows ("2:4,10:12") ask for all of theirs.
std::vector<long long> steps_of_window(const std::string& window) {
  std::vector<long long> steps;
  if (window.empty()) return steps;
  try {
    for (const StepWindow& w : parse_step_windows(window, "window")) {
      // A window far beyond any run is still named, not listed step by step.
      if (w.stop - w.start > 100000) return {};
      for (long long step = w.start; step < w.stop; ++step) steps.push_back(step);
    }
  } catch (const Error&) {
    return {};
  }
  return steps;
}

// "2-3", "2, 5-7", "none".
std::string steps_text(const std::vector<long long>& steps) {
  if (steps.empty()) return "none";
  std::string text;
  for (std::size_t i = 0; i < steps.size();) {
    std::size_t j = i;
    while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1) ++j;
    text += (text.empty() ? "" : ", ") + std::to_string(steps[i]);
    if (j > i) text += "-" + std::to_string(steps[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::ok:
      return "ok";
    case Verdict::never_started:
      return "never_started";
    case Verdict::killed_before_window:
      return "killed_before_window";
    case Verdict::killed_in_window:
      return "killed_in_window";
    case Verdict::window_not_reached:
      return "window_not_reached";
    case Verdict::lost_steps:
      return "lost_steps";
    case Verdict::empty:
      return "empty";
    case Verdict::writing:
      return "writing";
    case Verdict::qdstrm:
      return "qdstrm";
    case Verdict::missing:
      return "missing";
    case Verdict::unreadable:
      return "unreadable";
    case Verdict::not_exported:
      return "not_exported";
  }
  return "ok";
}

bool is_pending(Verdict verdict) {
  return verdict == Verdict::writing;
}

namespace {

bool capture_lost_for_a_known_cause(std::string_view state) {
  return state == kManifestDiskFull || state == kManifestNotWritable ||
         state == kManifestNameTaken || state == kManifestStopTimeout ||
         state == kManifestNsysFailed;
}

}  // namespace

CheckedReport judge_report(const FoundReport& found, const std::optional<HeldSteps>& held) {
  CheckedReport c;
  c.found = found;
  const std::optional<Manifest>& manifest = found.manifest_content;
  if (manifest) c.exit_status = manifest->exit_status;
  c.window_steps = steps_of_window(found.window);
  const std::string window = found.window.empty() ? "its window" : "its window " + found.window;
  const std::optional<int> signal = signal_of_exit_status(c.exit_status);
  switch (found.state) {
    case ReportState::writing:
      c.verdict = Verdict::writing;
      c.reason = "still being written: " + found.reason;
      return c;
    case ReportState::running:
      c.verdict = Verdict::writing;
      c.reason = found.reason;
      return c;
    case ReportState::qdstrm:
      c.verdict = Verdict::qdstrm;
      c.reason = ".qdstrm left: " + found.reason;
      return c;
    case ReportState::empty:
      c.verdict = Verdict::empty;
      c.reason = found.reason;
      return c;
    case ReportState::missing:
      if (manifest && capture_lost_for_a_known_cause(manifest->state)) {
        // nsel saw why (full disk, folder not writable, name taken, stop timeout, nsys failed
        // after the program opened its capture): the
        // manifest's reason says so, and where nsys left the capture.
        c.verdict = Verdict::missing;
        c.reason = manifest->state + ": " + found.reason;
      } else if (manifest && manifest->pid == 0) {
        c.verdict = Verdict::never_started;
        c.reason = "the program never started under nsys: " + found.reason;
      } else if (signal) {
        c.verdict = Verdict::killed_before_window;
        c.reason = "no report: " + killed_text(*c.exit_status) + " before " + window + " opened";
      } else if (c.exit_status == 0) {
        c.verdict = Verdict::window_not_reached;
        c.reason = "no report: the program ended (exit status 0) before " + window + " opened";
        if (!c.window_steps.empty()) c.reason += " at step " + std::to_string(c.window_steps[0]);
      } else {
        c.verdict = Verdict::missing;
        c.reason = found.reason;
      }
      return c;
    case ReportState::complete:
      break;
  }
  if (!held) {
    // The file is fine; its steps were not read (nsel ls, check --files-only). A program killed
    // by a signal may have died inside its window: that is said, never passed over.
    if (signal) {
      c.reason = killed_text(*c.exit_status) +
                 ": whether inside its window only its steps tell (nsel check reads them)";
    }
    return c;
  }
  c.steps = held->steps;
  c.cut_steps = held->cut;
  const std::vector<long long>* steps = &held->steps;
  // A step cut by the end of capture is not counted as held; the reason names it.
  const std::string cut = held->cut.empty() ? ""
                          : held->cut.size() == 1
                              ? "step " + steps_text(held->cut) + " was cut short (left out)"
                              : "steps " + steps_text(held->cut) + " were cut short (left out)";
  if (steps->empty()) {
    const bool nvtx_capture =
        manifest && std::find(manifest->command.begin(), manifest->command.end(),
                              "--capture-range=nvtx") != manifest->command.end();
    if (signal && !cut.empty()) {
      c.verdict = Verdict::killed_in_window;
      c.reason =
          "holds no whole step: " + killed_text(*c.exit_status) + " inside its window: " + cut;
    } else if (signal) {
      // Seen with Nsight Systems 2022.4: a program killed inside its window leaves a report
      // without the NVTX ranges it had buffered, its finished steps included.
      c.verdict = Verdict::killed_in_window;
      c.reason = "holds no step: " + killed_text(*c.exit_status) +
                 " inside its window, so the ranges it had recorded were lost";
    } else if (!cut.empty()) {
      c.verdict = Verdict::window_not_reached;
      c.reason = "holds no whole step: " + cut;
    } else if (nvtx_capture && !held->any_nvtx) {
      // Seen with Nsight Systems 2022.4 in 3 of 12 single runs here: the report is written, but
      // without any NVTX event, not even the capture range that opened it.
      c.verdict = Verdict::lost_steps;
      c.reason = "holds no NVTX event at all, not even nsel's capture range: nsys lost what " +
                 window + " recorded; run it again";
    } else {
      c.reason = "holds no NVTX range named 'step <n>': its steps cannot be checked";
    }
    return c;
  }
  std::vector<long long> lacking;
  for (long long step : c.window_steps) {
    if (!std::binary_search(steps->begin(), steps->end(), step)) lacking.push_back(step);
  }
  const std::string holds = "holds steps " + steps_text(*steps);
  const std::string and_cut = cut.empty() ? "" : "; " + cut;
  if (lacking.empty()) {
    c.reason = holds + and_cut;
    return c;
  }
  const std::string of = c.window_steps.empty() ? "" : " of " + steps_text(c.window_steps);
  // The last step of the window the report holds, when the steps after it are all it lacks.
  std::optional<long long> last_held;
  for (long long step : c.window_steps) {
    if (std::binary_search(steps->begin(), steps->end(), step)) last_held = step;
  }
  const bool stopped_after_last = last_held && lacking.front() == *last_held + 1 &&
                                  lacking.back() > *last_held &&
                                  std::all_of(lacking.begin(), lacking.end(),
                                              [&](long long step) { return step > *last_held; });
  const bool in_cut_step = std::binary_search(held->cut.begin(), held->cut.end(), lacking.front());
  if (signal) {
    c.verdict = Verdict::killed_in_window;
    c.reason = holds + of + ": " + killed_text(*c.exit_status) +
               (in_cut_step ? " in step " : " before step ") + std::to_string(lacking.front()) +
               and_cut;
  } else if (c.exit_status == 0 && stopped_after_last) {
    // A job may end before its window does (a window of 3:10 and 5 steps): a normal run.
    c.reason = holds + of + ": ended cleanly (exit status 0) after step " +
               std::to_string(*last_held) + ", inside " + window + and_cut;
  } else if (c.exit_status && *c.exit_status != 0) {
    c.verdict = Verdict::window_not_reached;
    c.reason = holds + of + ": the program failed (exit status " + std::to_string(*c.exit_status) +
               ") before step " + std::to_string(lacking.front()) + and_cut;
  } else {
    c.verdict = Verdict::window_not_reached;
    c.reason =
        holds + of + ": the program ended before step " + std::to_string(lacking.front()) + and_cut;
  }
  return c;
}

ListedReports list_reports(Discovery found) {
  ListedReports out;
  for (const FoundReport& r : found.reports) out.verdicts.push_back(judge_report(r));
  out.found = std::move(found);
  return out;
}

bool stopped_by_signal(const fs::path& report) {
  fs::path as_report = report;
  if (report.extension() == ".sqlite") as_report.replace_extension(".nsys-rep");
  const std::optional<Manifest> manifest = manifest_describing(as_report);
  return manifest && signal_of_exit_status(manifest->exit_status).has_value();
}

std::size_t RunCheck::count(Verdict verdict) const {
  return static_cast<std::size_t>(
      std::count_if(reports.begin(), reports.end(),
                    [verdict](const CheckedReport& r) { return r.verdict == verdict; }));
}

std::vector<std::string> RunCheck::unreadable_folders() const {
  std::vector<std::string> folders;
  for (const DiscoveryNote& note : notes) {
    if (note.kind == kUnreadableFolderNote) folders.push_back(note.path);
  }
  return folders;
}

int RunCheck::exit_code() const {
  if (reports.empty() || never_started > 0 || !unreadable_folders().empty()) return 1;
  if (expected && static_cast<long long>(processes) != *expected) return 1;
  bool pending = false;
  for (const CheckedReport& r : reports) {
    if (is_pending(r.verdict)) {
      pending = true;
    } else if (r.verdict != Verdict::ok) {
      return 1;
    }
  }
  return pending ? 3 : 0;
}

RunCheck check_run(const CheckRequest& request) {
  if (request.expect && *request.expect < 1) {
    throw Error(bad_value("--expect", std::to_string(*request.expect), "below 1",
                          "the number of selected processes the run has, 1 or more"));
  }
  const std::vector<fs::path> roots =
      request.roots.empty() ? default_report_roots() : request.roots;
  Discovery found = discover_reports(roots);
  RunCheck out;
  out.roots = found.roots;
  out.notes = found.notes;
  out.sessions = found.sessions;
  out.expected = request.expect;
  std::vector<FoundReport> reports = std::move(found.reports);
  // Without roots, "the run" is the session Ray's session_latest points to, else the newest by
  // name, whether it left reports or not: another session is never judged in its place. Names
  // are local wall-clock times: after a clock that stepped back (a DST fall-back, a fast clock
  // corrected, a container in another time zone) an older session may have the later name.
  if (request.roots.empty()) {
    const FoundSession* newest = nullptr;
    const FoundSession* newest_by_name = nullptr;
    for (const FoundSession& session : found.session_folders) {
      if (!is_ray_session_name(session.name)) continue;  // a copied session_latest
      if (newest_by_name == nullptr || session.name > newest_by_name->name) {
        newest_by_name = &session;
      }
      std::error_code ec;
      const fs::path latest = session.path.parent_path() / "session_latest";
      if (fs::is_symlink(fs::symlink_status(latest, ec)) &&
          fs::equivalent(latest, session.path, ec) &&
          (newest == nullptr || session.name > newest->name)) {
        newest = &session;
      }
    }
    out.session_is_latest = newest != nullptr;
    if (newest == nullptr) newest = newest_by_name;
    if (newest != nullptr) {
      out.session = newest->name;
      out.session_path = newest->path;
      out.session_started = ray_session_start_text(newest->name).value_or("");
      std::erase_if(reports, [&](const FoundReport& r) {
        return r.session != newest->name || r.root != newest->root;
      });
      // What concerns another session (an unreadable folder in an older one) is not this run's.
      const auto within = [](const std::string& path, const fs::path& folder) {
        return path == folder.string() || path.starts_with(folder.string() + "/");
      };
      std::erase_if(out.notes, [&](const DiscoveryNote& note) {
        if (within(note.path, newest->path)) return false;
        return std::any_of(
            found.session_folders.begin(), found.session_folders.end(),
            [&](const FoundSession& other) { return within(note.path, other.path); });
      });
      // Discovery's note on a session_latest that is not the newest name says both were
      // searched, as ls does; here only one is judged.
      for (DiscoveryNote& note : out.notes) {
        if (note.kind != "stale_session_latest" || newest_by_name == newest) continue;
        note.message = "session_latest points to " + newest->name + ", not to the newest name " +
                       newest_by_name->name + " (a clock that stepped back?); " + newest->name +
                       ", the current run as Ray says, was judged, not " + newest_by_name->name;
      }
      out.sessions = 1;
    }
  }

  const EnvLookup env = request.environment ? request.environment : EnvLookup(environment_variable);
  std::optional<ExportSettings> exports;
  const bool any_complete = std::any_of(reports.begin(), reports.end(), [](const FoundReport& r) {
    return r.state == ReportState::complete;
  });
  if (request.read_steps && any_complete) {
    // As `nsel report` chooses: each report by the nsys that can read it (its writer's version),
    // not merely the first on PATH.
    if (ExportSettings settings = export_settings_from(env); !settings.installs.empty()) {
      exports = std::move(settings);
      exports->exporting = request.exporting;
    }
  }
  std::set<std::tuple<std::string, std::string, std::string, std::string>> processes;
  for (const FoundReport& r : reports) {
    std::optional<HeldSteps> held;
    std::string unreadable;
    bool no_space = false;
    if (request.read_steps && r.state == ReportState::complete) {
      if (!exports) {
        unreadable =
            "no Nsight Systems found (NSEL_NSYS, PATH, known locations), so its steps cannot be "
            "read (--files-only skips them)";
      } else {
        try {
          const ExportResult made = ensure_export(r.path, *exports);
          const fs::path& file = made.file;
          for (const std::string& note : made.notes) {
            out.notes.push_back({r.root, r.path.string(), std::string(kForeignExportNote), note});
          }
          held.emplace();
          // Stopped by a signal: nsys closed at teardown the step the program was in.
          const std::optional<Manifest>& manifest = r.manifest_content;
          const bool stopped = manifest && signal_of_exit_status(manifest->exit_status).has_value();
          for (const StepRange& s : read_step_ranges(file, stopped)) {
            (s.cut ? held->cut : held->steps).push_back(s.step);
          }
          for (std::vector<long long>* list : {&held->steps, &held->cut}) {
            std::sort(list->begin(), list->end());
            list->erase(std::unique(list->begin(), list->end()), list->end());
          }
          // A step number held whole once (a restarted loop) is held.
          std::erase_if(held->cut, [&](long long step) {
            return std::binary_search(held->steps.begin(), held->steps.end(), step);
          });
          held->any_nvtx = !held->steps.empty() || !held->cut.empty() || export_has_nvtx(file);
        } catch (const ExportNoSpace& e) {
          unreadable = e.what();
          no_space = true;
        } catch (const Error& e) {
          unreadable = e.what();
        }
      }
    }
    CheckedReport checked = judge_report(r, unreadable.empty() ? held : std::nullopt);
    if (!unreadable.empty()) {
      checked.verdict = no_space ? Verdict::not_exported : Verdict::unreadable;
      checked.reason = unreadable;
    }
    // One process may leave several reports (one per window); a report of unknown process
    // counts on its own. The launch tells apart two processes of one pid (two containers on
    // one node each have their own pid namespace).
    std::string process = r.pid != 0 ? std::to_string(r.pid) : r.path.string();
    if (const std::optional<Manifest>& m = r.manifest_content) {
      process += " " + std::to_string(m->nsel_pid) + " " + m->start_time;
    }
    processes.insert({r.root, r.node, r.session, process});
    out.reports.push_back(std::move(checked));
  }
  out.processes = processes.size();
  if (out.expected && *out.expected > static_cast<long long>(out.processes)) {
    out.never_started = *out.expected - static_cast<long long>(out.processes);
  }
  return out;
}

}  // namespace nsel
