// Who a report is of: from its file name and the synced folder layout, and from the manifest
// `nsel exec` wrote beside it ("<stem>.nsel.json", see nsel/core/manifest.hpp) when there is
// one. The same rules as `nsel ls` (discovery.hpp), for one report given by its path.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "nsel/core/manifest.hpp"
#include "nsel/core/step_window.hpp"

namespace nsel {

struct ReportIdentity {
  std::string worker;                // "dtensor_policy_worker", or the file's stem
  std::optional<long long> rank;     // the manifest's RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK...
  std::string node;                  // the synced layout's node folder, else the manifest's node
  long long pid = 0;                 // 0 when unknown
  std::optional<StepWindow> window;  // the manifest's single window, else the file name's
  // What run the report is of, for the header of every summary: the Ray session folder among
  // its parents ("session_2026-12-04_21-40-00_123456_789"; "" when none), and from the
  // manifest, when there is one: the windows as written ("2:4,10:12"), the pattern that
  // selected the worker, and when nsys started (UTC, ISO 8601).
  std::string session;
  std::string windows_text;
  std::string pattern;
  std::string started;
  std::string nsys_version;   // the release that wrote the report ("2023.4.4"), when it says
  std::string label() const;  // "dtensor_policy_worker/4250": unique per process
};

// A report (.nsys-rep) or its export (.sqlite, identified as the report of the same stem).
// Never throws: an unreadable manifest is ignored, as the report is still worth summarising.
ReportIdentity identify_report(const std::filesystem::path& report);

// The manifest that describes a report (.nsys-rep): "<stem>.nsel.json", else, for a numbered
// report of a repeated capture range (nsys's "<base>.<k>.nsys-rep"), its base's
// "<base>.nsel.json". nullopt when none is readable.
std::optional<Manifest> manifest_describing(const std::filesystem::path& report);

}  // namespace nsel
