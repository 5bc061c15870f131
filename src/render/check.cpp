#include "nsel/render/check.hpp"

#include <algorithm>

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

// In the order of the counts in the JSON and of the summary in the verdict line.
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
                                    Verdict::unreadable,
                                    Verdict::not_exported};

}  // namespace

nlohmann::ordered_json render_check_json(const RunCheck& check) {
  Json out;
  out["schema"] = kCheckJsonSchema;
  out["nsel_check"] = 1;
  out["roots"] = check.roots;
  out["session"] = text_or_null(check.session);
  out["session_path"] = text_or_null(check.session_path.string());
  out["session_started"] = text_or_null(check.session_started);
  out["session_chosen_by"] = check.session.empty()     ? nlohmann::json(nullptr)
                             : check.session_is_latest ? nlohmann::json("session_latest")
                                                       : nlohmann::json("newest_name");
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

std::string render_check_text(const RunCheck& check, const std::vector<fs::path>& searched) {
  std::string out;
  const std::string where = joined_paths(searched);
  const std::string started =
      check.session_started.empty() ? "" : ", started " + check.session_started;
  if (!check.session.empty()) {
    out += formatted(
        "Checking %s (%s under %s%s)\n", shown(check.session).c_str(),
        check.session_is_latest ? "the session session_latest points to" : "the newest session",
        where.c_str(), started.c_str());
  } else {
    out += formatted("Checking %s\n", where.c_str());
  }
  for (const DiscoveryNote& note : check.notes) {
    out += formatted("  note: %s\n", shown(note.message).c_str());
  }
  std::size_t verdict_width = 7;
  std::size_t worker_width = 6;
  for (const CheckedReport& c : check.reports) {
    verdict_width = std::max(verdict_width, to_string(c.verdict).size());
    worker_width = std::max(worker_width, cell(c.found.worker).size());
  }
  if (!check.reports.empty()) {
    out += formatted("  %-*s  %-*s  %-7s  %-5s  %-8s  %s\n", static_cast<int>(verdict_width),
                     "VERDICT", static_cast<int>(worker_width), "WORKER", "WINDOW", "RANK", "PID",
                     "WHY");
  }
  for (const CheckedReport& c : check.reports) {
    const FoundReport& r = c.found;
    out += formatted("  %-*s  %-*s  %-7s  %-5s  %-8s  %s\n", static_cast<int>(verdict_width),
                     std::string(to_string(c.verdict)).c_str(), static_cast<int>(worker_width),
                     cell(r.worker).c_str(), cell(r.window).c_str(),
                     r.rank ? std::to_string(*r.rank).c_str() : "-",
                     r.pid != 0 ? std::to_string(r.pid).c_str() : "-",
                     shown(c.reason.empty() ? r.path.filename().string() : c.reason).c_str());
  }
  if (check.never_started > 0) {
    out += formatted("  %-*s  %lld selected process(es) expected but never started (no manifest)\n",
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
      out += formatted(
          "Verdict: FAILED: %s, %s%s, left no report or manifest (another session is not "
          "judged in its place)%s\n",
          check.session_is_latest ? "the current session" : "the newest session",
          shown(check.session).c_str(), started.c_str(), unread.c_str());
    } else {
      out += formatted("Verdict: FAILED: no report or manifest found under %s%s\n", where.c_str(),
                       unread.c_str());
    }
    return out;
  }
  summary += unread;
  out += formatted("Verdict: %s: %zu report(s) of %zu process(es)%s: %s\n",
                   code == 0   ? "OK"
                   : code == 3 ? "NOT YET (still being written; check again)"
                               : "FAILED",
                   check.reports.size(), check.processes, expected.c_str(), summary.c_str());
  return out;
}

}  // namespace nsel
