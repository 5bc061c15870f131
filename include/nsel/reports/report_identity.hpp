// Who a report is of: from its file name and the synced folder layout, and from the manifest
// `nsel exec` wrote beside it ("<stem>.nsel.json", see nsel/core/manifest.hpp) when there is
// one. The same rules as `nsel ls` (discovery.hpp), for one report given by its path.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "nsel/core/step_window.hpp"

namespace nsel {

struct ReportIdentity {
  std::string worker;                // "dtensor_policy_worker", or the file's stem
  std::optional<long long> rank;     // the manifest's RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK...
  std::string node;                  // the synced layout's node folder, else the manifest's node
  long long pid = 0;                 // 0 when unknown
  std::optional<StepWindow> window;  // the manifest's single window, else the file name's
  std::string label() const;         // "dtensor_policy_worker/4250": unique per process
};

// A report (.nsys-rep) or its export (.sqlite, identified as the report of the same stem).
// Never throws: an unreadable manifest is ignored, as the report is still worth summarising.
ReportIdentity identify_report(const std::filesystem::path& report);

}  // namespace nsel
