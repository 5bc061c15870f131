// The rules that say who a report is of, shared by discovery (`nsel ls`) and identify_report
// (`nsel report`).
#pragma once

#include <optional>
#include <string>

#include "nsel/core/manifest.hpp"
#include "nsel/reports/discovery.hpp"
#include "nsel/reports/layout.hpp"

namespace nsel::reports_detail {

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
