// Finding reports, left-over .qdstrm files and manifests under one or more roots: Ray temp
// folders (session_[0-9]* and session_latest), plain folders, and synced SLURM log folders
// (<job>-logs/ray/[<node>/]<session>/logs/nsight/). Only names and stat() are used: no report
// is opened, so listing thousands of reports takes milliseconds.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/manifest.hpp"

namespace nsel {

enum class ReportState {
  complete,  // a .nsys-rep that is not being written
  empty,     // a .nsys-rep known to hold no profile (see `reason`)
  writing,   // nsys or the importer is still writing it (or its .qdstrm)
  qdstrm,    // only a .qdstrm is left: 'nsel recover' turns it into a report
  running,   // a manifest says the process is still running; no file yet
  missing,   // a manifest says the process ended and nsys wrote no report
};

std::string_view to_string(ReportState state);

struct FoundReport {
  std::filesystem::path path;  // the .nsys-rep, or the .qdstrm, or the manifest's report path
  std::string root;            // the root it was found under, as given
  // The SLURM node folder, else the manifest's node (SLURMD_NODENAME, else its host), else
  // "(head)" for the head's folder, else "".
  std::string node;
  std::string session;                  // the Ray session folder name, or ""
  std::string job;                      // the SLURM "<job>" of "<job>-logs", or ""
  std::string worker;                   // from the manifest or the file name; "" when unknown
  std::string window;                   // "2:4"; "" for worker_process_<PID> and unknown names
  long long pid = 0;                    // 0 when unknown
  std::optional<long long> rank;        // the manifest's global rank (RANK, SLURM_PROCID, ...)
  std::optional<long long> local_rank;  // the manifest's rank within the node
  std::uintmax_t bytes = 0;             // of the file found (0 when there is none)
  std::chrono::system_clock::time_point modified{};
  ReportState state = ReportState::complete;
  std::string reason;                             // why empty/missing/writing, when known
  std::optional<std::filesystem::path> manifest;  // the manifest that describes it
  // Its content as discovery read it: every later step judges by this one reading (the file may
  // change while its worker runs), never by a reading of its own.
  std::optional<Manifest> manifest_content;
  std::optional<std::filesystem::path> qdstrm;  // a .qdstrm of the same name, when present
};

// A fact about a root worth telling: a stale or dangling session_latest, a duplicate skipped,
// an unreadable manifest.
struct DiscoveryNote {
  std::string root;
  std::string path;
  std::string kind;  // "stale_session_latest", "dangling_session_latest", "bad_manifest", ...
  std::string message;
};

// The kind of note for a folder that exists but cannot be read (permissions, I/O error): its
// reports, if any, are not counted, so `nsel check` is never OK while one is noted.
inline constexpr std::string_view kUnreadableFolderNote = "unreadable_folder";

// The kind of note for an export or record beside a report that belongs to another user: passed
// over, the report exported afresh into nsel's private cache (ExportResult::notes).
inline constexpr std::string_view kForeignExportNote = "foreign_export";

// A Ray session folder searched.
struct FoundSession {
  std::string root;
  std::filesystem::path path;
  std::string name;  // "session_<YYYY-MM-DD_HH-MM-SS_ffffff>_<pid>", or "session_latest"
};

struct Discovery {
  std::vector<std::string> roots;    // the roots that exist and were searched
  std::vector<FoundReport> reports;  // sorted: root, job, node, session, worker, rank, pid, path
  std::vector<DiscoveryNote> notes;
  std::size_t sessions = 0;                   // distinct Ray sessions searched
  std::vector<FoundSession> session_folders;  // every session searched, reports or none
};

struct DiscoveryOptions {
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
  std::string local_host;  // the host name of this machine, for "is that process alive?"
  int max_depth = 8;       // folders below a root (a session's logs/nsight counts as one step)
};

// Searches every root (a folder; a missing one is skipped). Never throws for a bad file: it
// becomes a note, as does a folder that cannot be read. Every report name counts, hidden or not,
// but for nsel's own temporaries; links to files are followed (a file reached twice counts
// once), links to folders only for sessions, as `nsel report` (find_report_files) does.
Discovery discover_reports(const std::vector<std::filesystem::path>& roots,
                           const DiscoveryOptions& options = {});

// The roots searched when none is given: /tmp/ray and nsel's demo root (<temp>/nsel-demo).
std::vector<std::filesystem::path> default_report_roots();

}  // namespace nsel
