// The rules that say who a report is of, shared by discovery (`nsel ls`) and identify_report
// (`nsel report`).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "nsel/core/manifest.hpp"
#include "nsel/reports/discovery.hpp"
#include "nsel/reports/layout.hpp"

namespace nsel::reports_detail {

// The names nsel gives files it is still writing beside reports (a .qdstrm being recovered,
// exports of older versions): never reports. Any other name is one, hidden ("." first) or not,
// so that every finder (`nsel ls`, `check`, `report`, `diff`) sees the same files.
inline bool is_nsel_temporary(std::string_view name) {
  if (name.find(".nsel-recover-") != std::string_view::npos ||
      name.find(".nsel-tmp-") != std::string_view::npos ||
      name.find(".nsel-partial") != std::string_view::npos) {
    return true;
  }
  // The hidden name nsys writes to under `nsel exec` until the keeper gives the report its own
  // (PlanRequest::claim_report_name): ".<name>.nsel<pid>-<hex>[.nsys-rep|.qdstrm]".
  if (!name.starts_with('.')) return false;
  for (std::size_t at = name.find(".nsel"); at != std::string_view::npos;
       at = name.find(".nsel", at + 1)) {
    std::size_t i = at + 5;
    const std::size_t digits = i;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
    if (i == digits || i >= name.size() || name[i] != '-') continue;
    const std::size_t hex = ++i;
    while (i < name.size() &&
           ((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
      ++i;
    if (i > hex && (i == name.size() || name[i] == '.')) return true;
  }
  return false;
}

// The only folder no finder searches: nsel sync's state at a mirror, which holds no report.
inline constexpr std::string_view kSyncStateFolder = ".nsel-sync";

// The node of the sessions right under "<job>-logs/ray" (other nodes have a folder there).
inline constexpr const char* kHeadNode = "(head)";

// nsys's --capture-range-end=repeat writes one report per window, "<stem>.<n>.nsys-rep", all
// described by the manifest "<stem>.nsel.json": "<stem>.<n>" -> "<stem>"; any other stem stays.
std::string numbered_report_base(const std::string& stem);

// What the file name "<stem>.nsys-rep" says (a numbered report's is its base's).
std::optional<ReportName> name_of_report(const std::string& stem);

// The manifest's word over the file name's: worker, window, pid, ranks, and its node unless the
// synced layout named one (`found.node`; a layout's node folder is how that tree names nodes).
void take_manifest(FoundReport& found, const Manifest& manifest);

}  // namespace nsel::reports_detail
