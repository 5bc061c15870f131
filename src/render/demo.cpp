#include "nsel/render/demo.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "nsel/core/values.hpp"
#include "nsel/render/report.hpp"
#include "render/formatted.hpp"
#include "render/json_schema.hpp"
#include "render/number_text.hpp"
#include "render/straggler_text.hpp"
#include "render/terminal_cells.hpp"

namespace nsel {
namespace {

namespace fs = std::filesystem;
using render_detail::formatted;
using render_detail::ms_tenths;
using render_detail::shown;

std::string column_label(const ProcessSummary& process) {
  const ReportIdentity& id = process.identity;
  std::string label = id.rank ? "rank " + std::to_string(*id.rank) : id.worker;
  if (id.pid != 0) label += " (pid " + std::to_string(id.pid) + ")";
  return label;
}

std::string verdict_line(const RunCheck& check) {
  std::string counts;
  std::map<std::string, int> by_verdict;
  for (const CheckedReport& r : check.reports) ++by_verdict[std::string(to_string(r.verdict))];
  if (check.never_started > 0) by_verdict["never_started"] += static_cast<int>(check.never_started);
  for (const auto& [verdict, n] : by_verdict) {
    counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + verdict;
  }
  const int code = check.exit_code();
  return std::string(code == 0   ? "OK"
                     : code == 3 ? "NOT YET"
                                 : "FAILED") +
         ": " + std::to_string(check.processes) + " process(es)" +
         (check.expected ? ", " + std::to_string(*check.expected) + " expected" : "") + ": " +
         (counts.empty() ? "no report" : counts);
}

// The step table, what each rank did inside a step, the straggler, the verdict and the page.
std::string findings_text(const DemoRun& run) {
  std::string out;
  if (run.summary && !run.summary->processes.empty()) {
    const ReportSet& set = *run.summary;
    out += formatted(
        "\nSteps, ms: the step (its compute: the step less its all-reduce wait); * "
        "compute above the median of the other ranks' by more than %.0f %%:\n",
        set.comparison.straggler_percent);
    out += formatted("  %-6s", "STEP");
    for (const ProcessSummary& p : set.processes)
      out += formatted("  %-22s", column_label(p).c_str());
    out += "\n";
    for (std::size_t i = 0; i < set.comparison.steps.size(); ++i) {
      const StepAcrossWorkers& step = set.comparison.steps[i];
      out += formatted("  %-6lld", step.step);
      for (std::size_t p = 0; p < set.processes.size(); ++p) {
        const auto& d = step.duration_ns[p];
        std::string value = d ? ms_tenths(*d) : "-";
        const auto& work = step.work_ns[p];
        if (work && !set.comparison.communication_ranges.empty()) {
          const bool slow =
              std::find(step.stragglers.begin(), step.stragglers.end(), p) != step.stragglers.end();
          value += " (" + ms_tenths(*work) + ")" + (slow ? " *" : "");
        }
        out += formatted("  %-22s", value.c_str());
      }
      out += "\n";
    }
    out += "\nInside a step (mean ms of its top-level ranges):\n";
    for (const ProcessSummary& p : set.processes) {
      std::vector<std::pair<std::string, long long>> totals;  // in first-seen order
      for (const StepSummary& step : p.steps) {
        for (const RangeShare& share : step.shares) {
          auto it = std::find_if(totals.begin(), totals.end(),
                                 [&](const auto& t) { return t.first == share.range; });
          if (it == totals.end()) {
            totals.emplace_back(share.range, share.ns);
          } else {
            it->second += share.ns;
          }
        }
      }
      std::string parts;
      for (const auto& [range, ns] : totals) {
        parts += (parts.empty() ? "" : ", ") + range + " " +
                 ms_tenths(ns / static_cast<long long>(std::max<std::size_t>(p.steps.size(), 1)));
      }
      out +=
          formatted("  %-20s  %s\n", column_label(p).c_str(), parts.empty() ? "-" : parts.c_str());
    }
    const StepComparison& c = set.comparison;
    out += "\nStraggler: " +
           (c.straggler
                ? shown(render_detail::process_name(set.processes[c.straggler->process].identity)) +
                      render_detail::straggler_finding(c, *c.straggler)
                : render_detail::no_straggler_text(c)) +
           "\n";
  } else if (!run.summary_problem.empty()) {
    out += formatted("\nSummary: %s\n", shown(run.summary_problem).c_str());
  }
  out += formatted("\nVerdict (nsel check %s): %s\n", shown(run.session.string()).c_str(),
                   verdict_line(run.verdict).c_str());
  for (const CheckedReport& r : run.verdict.reports) {
    if (r.verdict == Verdict::ok) continue;
    out += formatted("  %s  %s: %s\n", std::string(to_string(r.verdict)).c_str(),
                     shown(r.found.path.filename().string()).c_str(), shown(r.reason).c_str());
  }
  if (!run.html.empty()) out += formatted("\nHTML page: %s\n", shown(run.html.string()).c_str());
  return out;
}

}  // namespace

void write_demo_page(DemoRun& run) {
  if (!run.summary) return;
  const std::filesystem::path page = run.session / "nsel-report.html";
  write_report_html(*run.summary, page);
  run.html = page;
}

nlohmann::ordered_json render_demo_json(const DemoRun& run) {
  nlohmann::json out = {
      {"ray", run.ray_version.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.ray_version)},
      {"session", run.session.string()},
      {"nsight_dir", run.nsight_dir.string()},
      {"failed_workers", run.failed_workers},
      {"workers", nlohmann::json::array()},
      {"reports", nlohmann::json::array()},
      {"leftovers", nlohmann::json::array()}};
  for (const DemoWorker& worker : run.workers) {
    out["workers"].push_back(
        {{"worker", worker.name},
         {"rank", worker.rank},
         {"profiled", worker.profiled},
         {"reason", worker.reason},
         {"pid", worker.pid != 0 ? nlohmann::json(worker.pid) : nlohmann::json(nullptr)}});
  }
  for (const DemoReport& report : run.reports) {
    nlohmann::json steps = nlohmann::json::array();
    for (const StepRange& s : report.steps) steps.push_back(s.step);
    out["reports"].push_back(
        {{"path", report.path.string()},
         {"bytes", report.bytes},
         {"steps", steps},
         {"problem",
          report.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.problem)}});
  }
  for (const fs::path& leftover : run.leftovers) out["leftovers"].push_back(leftover.string());
  out["slow_rank"] = run.slow_rank >= 0 ? nlohmann::json(run.slow_rank) : nlohmann::json(nullptr);
  out["straggler"] = run.summary ? render_detail::straggler_json(*run.summary) : nullptr;
  nlohmann::json counts = nlohmann::json::object();
  for (const CheckedReport& r : run.verdict.reports) {
    counts[std::string(to_string(r.verdict))] =
        counts.value(std::string(to_string(r.verdict)), 0) + 1;
  }
  out["verdict"] = {{"exit_code", run.verdict.exit_code()},
                    {"processes", run.verdict.processes},
                    {"expected", run.verdict.expected ? nlohmann::json(*run.verdict.expected)
                                                      : nlohmann::json(nullptr)},
                    {"never_started", run.verdict.never_started},
                    {"counts", counts}};
  out["worker_log"] =
      run.worker_log.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.worker_log.string());
  out["html"] = run.html.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.html.string());
  return render_detail::schema_first(kDemoJsonSchema, out);
}

std::string render_demo_text(const DemoRun& run) {
  std::string out;
  if (!run.ray_version.empty()) {
    out += formatted("Ray %s actors:\n", run.ray_version.c_str());
    for (const DemoWorker& worker : run.workers) {
      out += formatted("  %-24s rank %-3d pid %-8lld %s\n", shown(worker.name).c_str(), worker.rank,
                       worker.pid, worker.profiled ? "profiled" : "bare (no nsys)");
    }
  } else if (run.shows_ranks) {
    out += "\nWorkers:\n";
    for (const DemoWorker& worker : run.workers) {
      out += formatted("  %-24s rank %-3d %s\n", shown(worker.name).c_str(), worker.rank,
                       worker.profiled ? "profiled" : "bare (no nsys)");
    }
  }
  out += formatted("\nReports in %s:\n", shown(run.nsight_dir.string()).c_str());
  if (run.reports.empty()) out += "  (none: no worker matched the patterns)\n";
  for (const DemoReport& report : run.reports) {
    out += formatted("  %-48s %10s  steps %s%s%s\n", shown(report.path.filename().string()).c_str(),
                     size_text(report.bytes).c_str(), describe_steps(report.steps).c_str(),
                     report.problem.empty() ? "" : "  ! ", shown(report.problem).c_str());
  }
  for (const fs::path& leftover : run.leftovers) {
    out += formatted("  %-48s (unfinished .qdstrm: the importer did not run)\n",
                     shown(leftover.filename().string()).c_str());
  }
  out += findings_text(run);
  return out;
}

}  // namespace nsel
