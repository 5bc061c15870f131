// `nsel check`: the verdict of a run. For every selected process (from the manifests `nsel exec`
// wrote), whether its report exists, is complete and holds the steps of its window, with the
// reason when not. `nsel ls` shows the same verdicts (judge_report without opening the reports).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/settings.hpp"
#include "nsel/reports/discovery.hpp"

namespace nsel {

enum class Verdict {
  ok,                    // a complete report holding every step of its window
  never_started,         // expected but no manifest, or nsel exec ended before the program began
  killed_before_window,  // killed by a signal before its window opened: no report
  killed_in_window,      // killed by a signal inside its window: the report lacks later steps
  window_not_reached,    // the program ended before its window (or before its end)
  lost_steps,            // NVTX capture, yet the report holds no NVTX event: nsys lost them
  empty,                 // a report too small to hold a profile (0 bytes, or cut short)
  writing,               // still being written, or the process still runs: ask again later
  qdstrm,                // only a .qdstrm is left: 'nsel recover' turns it into a report
  missing,               // nsys wrote no report, for another reason (its exit status is given)
  unreadable,            // the report is there but nsys cannot export it
  not_exported,          // no folder had room for its export: its steps were not read
};

std::string_view to_string(Verdict verdict);

// Pending verdicts may still turn out well; the others are final.
bool is_pending(Verdict verdict);

// What an opened report holds: the numbers of its "step <n>" NVTX ranges (sorted, once each),
// and whether it holds any NVTX event at all.
struct HeldSteps {
  std::vector<long long> steps;
  bool any_nvtx = true;
  // Steps cut by the end of capture (never closed, or closed by nsys at teardown after a stop
  // signal): not whole, so not in `steps` (sorted, once each).
  std::vector<long long> cut;
};

struct CheckedReport {
  FoundReport found;  // as `nsel ls` lists it
  Verdict verdict = Verdict::ok;
  std::string reason;              // one line; empty for a plain ok
  std::optional<int> exit_status;  // the program's (128 + signal when killed), from the manifest
  std::vector<long long> window_steps;          // the steps the window asks for ([start, stop))
  std::optional<std::vector<long long>> steps;  // the steps the report holds, when it was read
  std::vector<long long> cut_steps;             // steps cut by the end of capture (HeldSteps)
};

// The verdict on one found report from its state and its manifest (as discovery read it,
// found.manifest_content), and from `steps` when the report was opened (nullopt: not opened, so
// a complete report is ok as far as its file goes). Never throws.
CheckedReport judge_report(const FoundReport& found,
                           const std::optional<HeldSteps>& held = std::nullopt);

// nsel ls: every report found, and nsel check's verdict on each from the files alone
// (judge_report, no report opened), one per found.reports, in its order.
struct ListedReports {
  Discovery found;
  std::vector<CheckedReport> verdicts;
};
ListedReports list_reports(Discovery found);

struct CheckRequest {
  // Roots as `nsel ls` takes them. Empty: the newest session under default_report_roots(),
  // whether or not it left a report (an older one is never judged in its place).
  std::vector<std::filesystem::path> roots;
  std::optional<long long> expect;  // the number of selected processes the run should have
  bool read_steps = true;           // open complete reports (exports, cached) to check the steps
  // NSEL_NSYS and PATH (each report is exported by the nsys that can read it, as `nsel report`
  // chooses), XDG_CACHE_HOME, HOME.
  EnvLookup environment;
  std::function<void(const std::filesystem::path& report)> exporting;  // progress; may be empty
};

struct RunCheck {
  std::vector<std::string> roots;      // searched
  std::string session;                 // the session checked when no root was given, else ""
  std::filesystem::path session_path;  // its folder
  std::string session_started;         // "2026-12-01 13:29:27" (from its name), or ""
  // Why that session: Ray's session_latest points to it (the current run, whatever the clock
  // said when the names were made), else it has the newest name.
  bool session_is_latest = false;
  std::size_t sessions = 0;
  std::vector<CheckedReport> reports;  // in `nsel ls`'s order
  std::size_t processes = 0;           // distinct selected processes (one per manifest's process)
  std::optional<long long> expected;
  long long never_started = 0;  // expected minus found, when more were expected
  std::vector<DiscoveryNote> notes;

  std::size_t count(Verdict verdict) const;
  // The folders that could not be read (notes of kind kUnreadableFolderNote).
  std::vector<std::string> unreadable_folders() const;
  // 0: every report ok (and as many processes as expected); 3: nothing wrong but some still
  // being written or running; 1: any report missing or wrong, any folder that could not be
  // read, or none at all.
  int exit_code() const;
};

// Whether the manifest that describes `report` (manifest_describing: a numbered report's is its
// base's) says its program was stopped by a signal (exit status
// 128 + signal): nsys then closed at teardown the step it was in (read_step_ranges' `stopped`).
// False without a readable manifest.
bool stopped_by_signal(const std::filesystem::path& report);

// Throws nsel::Error (exit code 2) for --expect below 1; a root that is not a folder is the
// caller's to reject (as `nsel ls` does).
RunCheck check_run(const CheckRequest& request);

}  // namespace nsel
