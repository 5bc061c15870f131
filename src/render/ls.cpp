#include "nsel/render/ls.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "nsel/core/values.hpp"
#include "render/formatted.hpp"
#include "render/json_schema.hpp"
#include "render/terminal_cells.hpp"

namespace nsel {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using render_detail::cell;
using render_detail::formatted;
using render_detail::joined_paths;
using render_detail::shown;
using render_detail::text_or_null;

// In the order of the counts in the JSON and of the summary line.
constexpr ReportState kAllStates[] = {ReportState::complete, ReportState::empty,
                                      ReportState::writing,  ReportState::qdstrm,
                                      ReportState::running,  ReportState::missing};

}  // namespace

nlohmann::ordered_json render_ls_json(const ListedReports& listed) {
  const Discovery& found = listed.found;
  Json out;
  out["schema"] = kLsJsonSchema;
  out["nsel_ls"] = 1;
  out["roots"] = found.roots;
  out["sessions"] = found.sessions;
  Json counts = Json::object();
  for (ReportState state : kAllStates) counts[std::string(to_string(state))] = 0;
  for (const FoundReport& r : found.reports) {
    counts[std::string(to_string(r.state))] =
        counts[std::string(to_string(r.state))].get<int>() + 1;
  }
  out["counts"] = counts;
  Json notes = Json::array();
  for (const DiscoveryNote& note : found.notes) {
    notes.push_back(
        {{"root", note.root}, {"kind", note.kind}, {"path", note.path}, {"message", note.message}});
  }
  out["notes"] = notes;
  Json reports = Json::array();
  for (std::size_t i = 0; i < found.reports.size(); ++i) {
    const FoundReport& r = found.reports[i];
    Json item;
    item["path"] = r.path.string();
    item["state"] = std::string(to_string(r.state));
    item["reason"] = text_or_null(r.reason);
    item["worker"] = text_or_null(r.worker);
    item["window"] = text_or_null(r.window);
    item["pid"] = r.pid != 0 ? Json(r.pid) : Json(nullptr);
    item["rank"] = r.rank ? Json(*r.rank) : Json(nullptr);
    item["local_rank"] = r.local_rank ? Json(*r.local_rank) : Json(nullptr);
    item["node"] = text_or_null(r.node);
    item["session"] = text_or_null(r.session);
    item["job"] = text_or_null(r.job);
    item["root"] = r.root;
    item["bytes"] = r.bytes;
    item["modified"] = r.bytes > 0 || r.modified.time_since_epoch().count() != 0
                           ? Json(utc_time_text(r.modified, false))
                           : Json(nullptr);
    item["manifest"] = r.manifest ? Json(r.manifest->string()) : Json(nullptr);
    item["qdstrm"] = r.qdstrm ? Json(r.qdstrm->string()) : Json(nullptr);
    // nsel check's verdict from names, sizes and the manifest alone (no report is opened).
    const CheckedReport& checked = listed.verdicts[i];
    item["verdict"] = std::string(to_string(checked.verdict));
    item["verdict_reason"] = text_or_null(checked.reason);
    reports.push_back(item);
  }
  out["reports"] = reports;
  return out;
}

std::string render_ls_text(const ListedReports& listed, const std::vector<fs::path>& searched) {
  const Discovery& found = listed.found;
  std::string out;
  if (found.reports.empty()) {
    const std::string where = joined_paths(searched);
    out += formatted("No reports found under %s.\n", where.c_str());
  }
  std::string current_root;
  std::tuple<std::string, std::string, std::string, std::string> current_group;
  bool first_group = true;
  size_t worker_width = 6;
  for (size_t i = 0; i < found.reports.size(); ++i) {
    const FoundReport& r = found.reports[i];
    if (r.root != current_root || first_group) {
      current_root = r.root;
      out += formatted("%s%s\n", first_group ? "" : "\n", shown(r.root).c_str());
      for (const DiscoveryNote& note : found.notes) {
        if (note.root == r.root) out += formatted("  note: %s\n", shown(note.message).c_str());
      }
    }
    const auto group = std::make_tuple(r.job, r.node, r.session, r.path.parent_path().string());
    if (group != current_group || first_group) {
      current_group = group;
      first_group = false;
      std::string title;
      if (!r.job.empty()) title += "job " + r.job + "  ";
      title += "node " + cell(r.node) + "  ";
      if (!r.session.empty()) title += r.session;
      out += formatted("  %s\n    in %s\n", shown(title).c_str(),
                       shown(r.path.parent_path().string()).c_str());
      worker_width = 6;
      for (size_t j = i; j < found.reports.size(); ++j) {
        const FoundReport& other = found.reports[j];
        if (std::make_tuple(other.job, other.node, other.session,
                            other.path.parent_path().string()) != group) {
          break;
        }
        worker_width = std::max(worker_width, cell(other.worker).size());
      }
      out +=
          formatted("    %-*s  %-7s  %-5s  %-8s  %10s  %-20s  %s\n", static_cast<int>(worker_width),
                    "WORKER", "WINDOW", "RANK", "PID", "SIZE", "VERDICT", "STATE");
    }
    // The verdict's reason says more than the state's (why a report is missing).
    const CheckedReport& checked = listed.verdicts[i];
    const std::string& why = checked.reason.empty() ? r.reason : checked.reason;
    const std::string state =
        std::string(to_string(r.state)) + (why.empty() ? "" : " (" + why + ")");
    out += formatted("    %-*s  %-7s  %-5s  %-8s  %10s  %-20s  %s\n",
                     static_cast<int>(worker_width), cell(r.worker).c_str(), cell(r.window).c_str(),
                     r.rank ? std::to_string(*r.rank).c_str() : "-",
                     r.pid != 0 ? std::to_string(r.pid).c_str() : "-", size_text(r.bytes).c_str(),
                     std::string(to_string(checked.verdict)).c_str(), shown(state).c_str());
  }
  for (const DiscoveryNote& note : found.notes) {
    const bool root_listed = std::any_of(found.reports.begin(), found.reports.end(),
                                         [&](const FoundReport& r) { return r.root == note.root; });
    if (!root_listed) {
      out += formatted("%s\n  note: %s\n", shown(note.root).c_str(), shown(note.message).c_str());
    }
  }
  if (!found.reports.empty()) {
    std::map<ReportState, int> counts;
    for (const FoundReport& r : found.reports) ++counts[r.state];
    std::string summary;
    for (ReportState state : kAllStates) {
      if (counts[state] == 0) continue;
      summary += (summary.empty() ? "" : ", ") + std::to_string(counts[state]) + " " +
                 std::string(to_string(state));
    }
    out += formatted("\n%zu report(s) in %zu session(s): %s\n", found.reports.size(),
                     found.sessions, summary.c_str());
    out +=
        "'nsel check' opens each complete report for its window's steps and exits non-zero "
        "when any is missing or wrong.\n";
  }
  return out;
}

}  // namespace nsel
