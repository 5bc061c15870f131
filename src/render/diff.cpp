// Terminal summary, JSON and CSV of `nsel diff`. Durations: ns in JSON and CSV, ms in the
// terminal.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "nsel/core/error.hpp"
#include "nsel/render/diff.hpp"
#include "nsel/sys/files.hpp"
#include "render/formatted.hpp"
#include "render/number_text.hpp"
#include "render/plain_tables.hpp"
#include "render/run_header.hpp"
#include "render/terminal_cells.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

using render_detail::fixed;

constexpr std::size_t kAllRanksAtMost = 16;  // more: only the out-of-line ones, in the terminal
constexpr std::size_t kTopRows = 10;
constexpr std::size_t kNameWidth = 33;  // of kernels and ranges: the rest of 100 columns

std::string ms_of(double ns, int digits = 3) {
  return fixed(ns / 1e6, digits);
}

std::string p_text(double p) {
  return p < 0.0001 ? "< 0.0001" : fixed(p, 4);
}

// "-" for a test not made.
std::string tested_p_text(const Change& change) {
  return change.verdict == ChangeVerdict::inconclusive ? "-" : p_text(change.p_value);
}

// A kernel's name as the terminal shows it: "void ", namespaces and the argument list gone, a
// template's arguments as "<...>", then cut to `width`; --json and --csv keep the full name.
std::string shortened(const std::string& name, std::size_t width) {
  std::string out;
  int angle = 0;
  int paren = 0;
  for (std::size_t i = name.rfind("void ", 0) == 0 ? 5 : 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' && paren == 0 && angle++ == 0) out += "<...>";
    if (c == '(' && angle == 0) ++paren;
    if (angle == 0 && paren == 0) out += c;
    if (c == '>' && paren == 0 && angle > 0) --angle;
    if (c == ')' && angle == 0 && paren > 0) --paren;
  }
  // Namespaces go too (the short name's way): the kernel's own name tells most.
  const std::size_t scope = out.rfind("::", out.find('<'));
  if (scope != std::string::npos) out = out.substr(scope + 2);
  if (out.empty()) out = name;
  if (out.size() <= width) return out;
  // "<...>" already says something was left out: drop it whole rather than cut it open.
  const std::size_t templated = out.rfind("<...>");
  if (templated != std::string::npos && templated + 5 == out.size() && templated <= width - 3) {
    return out.substr(0, templated) + "...";
  }
  return out.substr(0, width - 3) + "...";
}

using render_detail::TextTable;

std::string steps_tested_text(const Change& change) {
  if (change.baseline_steps.count == change.candidate_steps.count) {
    return std::to_string(change.baseline_steps.count) + " steps per run";
  }
  return std::to_string(change.baseline_steps.count) + " and " +
         std::to_string(change.candidate_steps.count) + " steps";
}

std::string verdict_line(const std::string& what, const Change& change) {
  std::string out = what + ": " + std::string(verdict_name(change.verdict));
  if (change.verdict == ChangeVerdict::inconclusive) return out + " (" + change.reason + ")";
  if (change.verdict == ChangeVerdict::unchanged) {
    out += " (" + render_detail::signed_percent_text(change.change_percent) + ", ";
  } else {
    out += " by " + fixed(std::fabs(change.change_percent), 1) + " % (";
  }
  return out + "median " + ms_of(change.baseline_steps.median, 1) + " ms -> " +
         ms_of(change.candidate_steps.median, 1) + " ms, p " +
         (change.p_value < 0.0001 ? "" : "= ") + p_text(change.p_value) + ", Mann-Whitney U over " +
         steps_tested_text(change) + ")";
}

std::string metric_name(const MetricDiff& m) {
  return m.kind == MetricDiff::Kind::range ? "range " + m.name : m.name;
}

std::vector<std::string> change_cells(const Change& c, bool with_steps) {
  std::vector<std::string> out = {
      std::string(verdict_name(c.verdict)), render_detail::signed_percent_text(c.change_percent),
      tested_p_text(c), ms_of(c.baseline_steps.median), ms_of(c.candidate_steps.median)};
  if (with_steps) out.push_back(std::to_string(c.baseline_steps.count));
  return out;
}

// The key (worker and rank) and both processes' PIDs: which actor changed, in which run.
std::string pair_name(const ProcessPairDiff& p) {
  std::string out = p.key;
  const auto pid = [](const ReportIdentity& id) {
    return id.pid != 0 ? std::to_string(id.pid) : std::string("?");
  };
  out += " (pid " + pid(p.baseline) + " -> " + pid(p.candidate) + ")";
  if (p.paired_by != "identity") out += " (by " + p.paired_by + ")";
  if (p.out_of_line) out += " *";
  return out;
}

void totals_table(std::ostringstream& out, const std::string& title,
                  const std::vector<TotalsDiff>& rows, bool kernels) {
  if (rows.empty()) return;
  const std::size_t shown = std::min(rows.size(), kTopRows);
  out << "\n"
      << title << " (top " << shown << " of " << rows.size() << " by change in total time"
      << (kernels ? "; * communication" : "") << "; mean: per instance, Welch's t-test)\n";
  // The verdict is on the mean duration, so its change stands beside it: a kernel launched
  // less often can take less time in all while each launch got slower.
  TextTable table({"count", "total ms", "change", "mean", "p", "verdict", "name"});
  for (std::size_t i = 0; i < shown; ++i) {
    const TotalsDiff& r = rows[i];
    const bool tested = r.mean_verdict != ChangeVerdict::inconclusive;
    const double mean_change =
        r.baseline.mean == 0 ? 0 : (r.candidate.mean - r.baseline.mean) / r.baseline.mean * 100;
    table.add(
        {std::to_string(r.baseline.count) + "->" + std::to_string(r.candidate.count),
         ms_of(static_cast<double>(r.baseline.total), 1) + "->" +
             ms_of(static_cast<double>(r.candidate.total), 1),
         r.baseline.total == 0 ? "new" : render_detail::signed_percent_text(r.total_change_percent),
         r.baseline.count == 0 || r.candidate.count == 0
             ? "-"
             : render_detail::signed_percent_text(mean_change),
         tested ? p_text(r.mean_p_value) : "-",
         tested ? std::string(verdict_name(r.mean_verdict)) : "-",
         (r.communication ? "* " : "") + shortened(r.name, kNameWidth)});
  }
  out << table.render("  ");
}

std::string steps_list(const std::vector<long long>& steps) {
  std::string out;
  for (std::size_t i = 0; i < std::min(steps.size(), kTopRows); ++i) {
    out += (i ? ", " : "") + std::to_string(steps[i]);
  }
  if (steps.size() > kTopRows) out += ", ... (" + std::to_string(steps.size()) + " in all)";
  return out;
}

void failures_text(std::ostringstream& out, const std::string& side, const DiffSide& s) {
  if (s.failures.empty()) return;
  out << "\nNot readable in the " << side << " (" << s.failures.size() << ")\n";
  for (const ReportFailure& f : s.failures) out << "  " << render_detail::shown(f.message) << "\n";
}

}  // namespace

std::string render_diff_text(const RunDiff& diff) {
  std::ostringstream out;
  out << render_detail::shown(verdict_line("step time", diff.step_time().change)) << "\n";
  // Which runs: "Run:" becomes "Baseline run:" and "Candidate run:".
  out << "Baseline r" << render_detail::run_header_text(diff.baseline.run).substr(1) << "\n";
  out << "Candidate r" << render_detail::run_header_text(diff.candidate.run).substr(1) << "\n";
  out << "nsel diff: " << diff.pairs.size() << (diff.pairs.size() == 1 ? " pair" : " pairs")
      << " of processes (baseline " << diff.baseline.processes << ", candidate "
      << diff.candidate.processes << "), paired by " << pairing_rule_text(diff.options.pairing)
      << "\n";
  out << "a verdict of faster or slower: p < " << diff.options.alpha << " and a change of "
      << fixed(diff.options.min_change_percent, 1) << " % or more, over at least "
      << diff.options.min_steps << " steps a run\n";

  out << "\nMetrics (per step: the median across ranks; ms)\n";
  TextTable metrics({"verdict", "change", "p", "baseline", "candidate", "steps", "metric"}, 1);
  // Why each inconclusive metric is, below the table: the reasons would widen it.
  std::vector<std::pair<std::string, std::string>> reasons;
  for (const MetricDiff& m : diff.metrics) {
    std::vector<std::string> row = change_cells(m.change, true);
    row.push_back(metric_name(m));
    metrics.add(row);
    if (m.change.reason.empty()) continue;
    if (reasons.empty() || reasons.back().second != m.change.reason) {
      reasons.push_back({metric_name(m), m.change.reason});
    } else {
      reasons.back().first += ", " + metric_name(m);
    }
  }
  out << metrics.render("  ");
  for (const auto& [names, reason] : reasons) {
    out << "  inconclusive: " << render_detail::shown(names) << " (" << render_detail::shown(reason)
        << ")\n";
  }

  if (!diff.pairs.empty()) {
    const bool all = diff.pairs.size() <= kAllRanksAtMost;
    out << "\nRanks (step time over each one's own paired steps, ms; vs job: percentage points;\n"
           "  * out of line: its verdict is not the job's)\n";
    TextTable ranks({"verdict", "change", "p", "baseline", "candidate", "vs job", "rank"}, 1);
    std::size_t in_line = 0;
    for (const ProcessPairDiff& p : diff.pairs) {
      if (!all && !p.out_of_line) {
        ++in_line;
        continue;
      }
      std::vector<std::string> row = change_cells(p.step, false);
      row.push_back(fixed(p.change_vs_job_points, 1));
      row.push_back(pair_name(p));
      ranks.add(row);
    }
    if (all || in_line < diff.pairs.size()) out << ranks.render("  ");
    if (!all) out << "  " << in_line << " more ranks in line (see --json or --csv)\n";
  }

  totals_table(out, "Kernels", diff.kernels, true);
  totals_table(out, "NVTX ranges", diff.nvtx, false);

  if (!diff.unpaired.empty()) {
    out << "\nUnpaired processes (" << diff.unpaired.size() << ")\n";
    TextTable unpaired({"side", "key", "process", "report"}, 3);
    for (std::size_t i = 0; i < std::min(diff.unpaired.size(), kTopRows); ++i) {
      const UnpairedProcess& u = diff.unpaired[i];
      unpaired.add({u.side, u.key, u.label, u.report.string()});
    }
    out << unpaired.render("  ");
    if (diff.unpaired.size() > kTopRows) {
      out << "  ... and " << diff.unpaired.size() - kTopRows << " more (see --json or --csv)\n";
    }
  }
  if (!diff.steps_only_in_baseline.empty() || !diff.steps_only_in_candidate.empty()) {
    out << "\nUnpaired steps\n";
    if (!diff.steps_only_in_baseline.empty()) {
      out << "  only in the baseline (" << diff.steps_only_in_baseline.size()
          << "): " << steps_list(diff.steps_only_in_baseline) << "\n";
    }
    if (!diff.steps_only_in_candidate.empty()) {
      out << "  only in the candidate (" << diff.steps_only_in_candidate.size()
          << "): " << steps_list(diff.steps_only_in_candidate) << "\n";
    }
  }
  const auto one_sided = std::count_if(diff.pairs.begin(), diff.pairs.end(), [](const auto& p) {
    return !p.steps_only_in_baseline.empty() || !p.steps_only_in_candidate.empty();
  });
  if (one_sided > 0) {
    out << "  " << one_sided << (one_sided == 1 ? " rank has" : " ranks have")
        << " steps on one side only (see --json or --csv)\n";
  }
  failures_text(out, "baseline", diff.baseline);
  failures_text(out, "candidate", diff.candidate);
  return out.str();
}

namespace {

nlohmann::json distribution_json(const Distribution& d) {
  return {{"count", d.count}, {"median_ns", d.median}, {"q1_ns", d.q1},
          {"q3_ns", d.q3},    {"min_ns", d.min},       {"max_ns", d.max}};
}

nlohmann::json change_json(const Change& c) {
  return {{"verdict", verdict_name(c.verdict)},
          {"change_percent", c.change_percent},
          {"p_value", c.p_value},
          {"reason", c.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.reason)},
          {"baseline", distribution_json(c.baseline)},
          {"candidate", distribution_json(c.candidate)},
          {"baseline_steps", distribution_json(c.baseline_steps)},
          {"candidate_steps", distribution_json(c.candidate_steps)}};
}

nlohmann::json change_json(const std::optional<Change>& c) {
  return c ? change_json(*c) : nlohmann::json(nullptr);
}

std::string_view kind_name(MetricDiff::Kind kind) {
  switch (kind) {
    case MetricDiff::Kind::step:
      return "step";
    case MetricDiff::Kind::range:
      return "range";
    case MetricDiff::Kind::communication:
      return "communication";
    case MetricDiff::Kind::compute:
      return "compute";
    case MetricDiff::Kind::gpu_idle:
      return "gpu_idle";
  }
  return "step";
}

nlohmann::json identity_json(const ReportIdentity& id) {
  return {{"label", id.label()},
          {"worker", id.worker},
          {"rank", id.rank ? nlohmann::json(*id.rank) : nlohmann::json(nullptr)},
          {"node", id.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(id.node)},
          {"pid", id.pid ? nlohmann::json(id.pid) : nlohmann::json(nullptr)}};
}

nlohmann::json stats_json(const DurationStats& s) {
  // No median: pooled over processes and launch shapes it cannot be rebuilt from the parts.
  return {{"count", s.count}, {"total_ns", s.total}, {"mean_ns", s.mean},
          {"min_ns", s.min},  {"max_ns", s.max},     {"stddev_ns", s.stddev}};
}

nlohmann::json totals_json(const std::vector<TotalsDiff>& rows, bool kernels) {
  nlohmann::json out = nlohmann::json::array();
  for (const TotalsDiff& r : rows) {
    nlohmann::json row = {{"name", r.name},
                          {"baseline", stats_json(r.baseline)},
                          {"candidate", stats_json(r.candidate)},
                          {"count_change", r.count_change},
                          {"total_change_percent", r.total_change_percent},
                          {"mean_p_value", r.mean_p_value},
                          {"mean_verdict", verdict_name(r.mean_verdict)}};
    if (kernels) row["communication"] = r.communication;
    out.push_back(std::move(row));
  }
  return out;
}

nlohmann::json side_json(const DiffSide& s) {
  nlohmann::json failures = nlohmann::json::array();
  for (const ReportFailure& f : s.failures) {
    failures.push_back({{"report", f.report.string()}, {"error", f.message}});
  }
  return {{"paths", s.paths},
          {"processes", s.processes},
          {"failures", failures},
          {"run", render_detail::run_json(s.run)}};
}

}  // namespace

nlohmann::json render_diff_json(const RunDiff& diff) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const MetricDiff& m : diff.metrics) {
    metrics.push_back(
        {{"kind", kind_name(m.kind)}, {"name", m.name}, {"change", change_json(m.change)}});
  }
  nlohmann::json pairs = nlohmann::json::array();
  for (const ProcessPairDiff& p : diff.pairs) {
    pairs.push_back({{"key", p.key},
                     {"paired_by", p.paired_by},
                     {"baseline", identity_json(p.baseline)},
                     {"candidate", identity_json(p.candidate)},
                     {"baseline_report", p.baseline_report.string()},
                     {"candidate_report", p.candidate_report.string()},
                     {"step", change_json(p.step)},
                     {"compute", change_json(p.compute)},
                     {"communication", change_json(p.communication)},
                     {"change_vs_job_points", p.change_vs_job_points},
                     {"out_of_line", p.out_of_line},
                     {"steps_only_in_baseline", p.steps_only_in_baseline},
                     {"steps_only_in_candidate", p.steps_only_in_candidate}});
  }
  nlohmann::json unpaired = nlohmann::json::array();
  for (const UnpairedProcess& u : diff.unpaired) {
    unpaired.push_back(
        {{"side", u.side}, {"key", u.key}, {"label", u.label}, {"report", u.report.string()}});
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const StepDiff& s : diff.steps) {
    steps.push_back({{"step", s.step},
                     {"baseline", distribution_json(s.baseline)},
                     {"candidate", distribution_json(s.candidate)},
                     {"change_percent", s.change_percent}});
  }
  const DiffOptions& o = diff.options;
  return {{"schema", kDiffJsonSchema},
          {"options",
           {{"pair_by", pairing_rule_text(o.pairing)},
            {"alpha", o.alpha},
            {"min_change_percent", o.min_change_percent},
            {"min_steps", o.min_steps}}},
          {"baseline", side_json(diff.baseline)},
          {"candidate", side_json(diff.candidate)},
          {"metrics", metrics},
          {"pairs", pairs},
          {"unpaired", unpaired},
          {"steps", steps},
          {"steps_only_in_baseline", diff.steps_only_in_baseline},
          {"steps_only_in_candidate", diff.steps_only_in_candidate},
          {"kernels", totals_json(diff.kernels, true)},
          {"nvtx", totals_json(diff.nvtx, false)},
          {"gate", diff.gate ? nlohmann::json{{"percent", diff.gate->percent},
                                              {"outcome",
                                               std::string(gate_outcome_name(diff.gate->outcome))},
                                              {"reason", diff.gate->reason.empty()
                                                             ? nlohmann::json(nullptr)
                                                             : nlohmann::json(diff.gate->reason)}}
                             : nlohmann::json(nullptr)}};
}

std::string render_gate_line(const RunDiff& diff, const std::string& given) {
  if (!diff.gate) return "";
  const std::string gate = render_detail::shown(given);
  switch (diff.gate->outcome) {
    case GateOutcome::passed:
      return "";
    case GateOutcome::regression:
      return render_detail::formatted(
          "nsel diff: gate failed: the step time is slower by %.1f %% (more than --gate %s %%) "
          "and the difference is beyond the steps' spread\n",
          diff.step_time().change.change_percent, gate.c_str());
    case GateOutcome::no_evidence:
      return "nsel: error: --gate " + gate + ": " + render_detail::shown(diff.gate->reason) +
             "; nothing was compared\n";
  }
  return "";
}

namespace {

using render_detail::Csv;

// Enough digits to read a p-value or a nanosecond median back.
std::string number(double value) {
  std::ostringstream out;
  out.precision(10);
  out << value;
  return out.str();
}

std::vector<std::string> change_header(const std::string& prefix) {
  std::vector<std::string> out;
  for (const char* column :
       {"verdict", "change_percent", "p_value", "baseline_median_ns", "candidate_median_ns",
        "baseline_steps", "candidate_steps", "baseline_q1_ns", "baseline_q3_ns", "candidate_q1_ns",
        "candidate_q3_ns", "reason"}) {
    out.push_back(prefix + column);
  }
  return out;
}

std::vector<std::string> change_row(const Change& c) {
  return {std::string(verdict_name(c.verdict)),
          number(c.change_percent),
          number(c.p_value),
          number(c.baseline_steps.median),
          number(c.candidate_steps.median),
          std::to_string(c.baseline_steps.count),
          std::to_string(c.candidate_steps.count),
          number(c.baseline.q1),
          number(c.baseline.q3),
          number(c.candidate.q1),
          number(c.candidate.q3),
          c.reason};
}

std::vector<std::string> optional_change_row(const std::optional<Change>& c) {
  if (c) return change_row(*c);
  return std::vector<std::string>(change_header("").size());
}

template <typename... Parts>
std::vector<std::string> joined(std::vector<std::string> first, const Parts&... rest) {
  (first.insert(first.end(), rest.begin(), rest.end()), ...);
  return first;
}

void totals_csv(Csv& csv, const std::vector<TotalsDiff>& rows, bool kernels) {
  std::vector<std::string> header = {"name"};
  if (kernels) header.push_back("communication");
  for (const char* column :
       {"baseline_count", "candidate_count", "count_change", "baseline_total_ns",
        "candidate_total_ns", "total_change_percent", "baseline_mean_ns", "candidate_mean_ns",
        "baseline_stddev_ns", "candidate_stddev_ns", "baseline_min_ns", "candidate_min_ns",
        "baseline_max_ns", "candidate_max_ns", "mean_p_value", "mean_verdict"}) {
    header.push_back(column);
  }
  csv.row(header);
  for (const TotalsDiff& r : rows) {
    std::vector<std::string> row = {r.name};
    if (kernels) row.push_back(r.communication ? "1" : "0");
    const std::vector<std::string> rest = {std::to_string(r.baseline.count),
                                           std::to_string(r.candidate.count),
                                           std::to_string(r.count_change),
                                           std::to_string(r.baseline.total),
                                           std::to_string(r.candidate.total),
                                           number(r.total_change_percent),
                                           number(r.baseline.mean),
                                           number(r.candidate.mean),
                                           number(r.baseline.stddev),
                                           number(r.candidate.stddev),
                                           std::to_string(r.baseline.min),
                                           std::to_string(r.candidate.min),
                                           std::to_string(r.baseline.max),
                                           std::to_string(r.candidate.max),
                                           number(r.mean_p_value),
                                           std::string(verdict_name(r.mean_verdict))};
    csv.row(joined(row, rest));
  }
}

}  // namespace

std::vector<fs::path> write_diff_csv(const RunDiff& diff, const fs::path& dir) {
  render_detail::CsvFolder folder(dir);
  const auto add = [&folder](const std::string& name) -> Csv& { return folder.add(name); };

  Csv& metrics = add("diff_metrics.csv");
  metrics.row(joined({"metric", "kind"}, change_header("")));
  for (const MetricDiff& m : diff.metrics) {
    metrics.row(joined({m.name, std::string(kind_name(m.kind))}, change_row(m.change)));
  }

  Csv& steps = add("diff_steps.csv");
  steps.row({"step", "pairs", "baseline_median_ns", "candidate_median_ns", "change_percent",
             "baseline_min_ns", "baseline_max_ns", "candidate_min_ns", "candidate_max_ns"});
  for (const StepDiff& s : diff.steps) {
    steps.row({std::to_string(s.step), std::to_string(s.baseline.count), number(s.baseline.median),
               number(s.candidate.median), number(s.change_percent), number(s.baseline.min),
               number(s.baseline.max), number(s.candidate.min), number(s.candidate.max)});
  }

  Csv& ranks = add("diff_ranks.csv");
  ranks.row(joined({"key", "paired_by", "baseline_process", "candidate_process",
                    "change_vs_job_points", "out_of_line", "steps_only_in_baseline",
                    "steps_only_in_candidate", "baseline_report", "candidate_report"},
                   change_header("step_"), change_header("compute_"),
                   change_header("communication_")));
  for (const ProcessPairDiff& p : diff.pairs) {
    ranks.row(joined({p.key, p.paired_by, p.baseline.label(), p.candidate.label(),
                      number(p.change_vs_job_points), p.out_of_line ? "1" : "0",
                      std::to_string(p.steps_only_in_baseline.size()),
                      std::to_string(p.steps_only_in_candidate.size()), p.baseline_report.string(),
                      p.candidate_report.string()},
                     change_row(p.step), optional_change_row(p.compute),
                     optional_change_row(p.communication)));
  }

  totals_csv(add("diff_kernels.csv"), diff.kernels, true);
  totals_csv(add("diff_nvtx.csv"), diff.nvtx, false);

  // Processes and steps on one side only, one row each: nothing is left out silently.
  Csv& unpaired = add("diff_unpaired.csv");
  unpaired.row({"what", "side", "key", "process", "step", "report"});
  for (const UnpairedProcess& u : diff.unpaired) {
    unpaired.row({"process", u.side, u.key, u.label, "", u.report.string()});
  }
  for (const ProcessPairDiff& p : diff.pairs) {
    for (long long step : p.steps_only_in_baseline) {
      unpaired.row({"step", "baseline", p.key, p.baseline.label(), std::to_string(step),
                    p.baseline_report.string()});
    }
    for (long long step : p.steps_only_in_candidate) {
      unpaired.row({"step", "candidate", p.key, p.candidate.label(), std::to_string(step),
                    p.candidate_report.string()});
    }
  }

  return folder.write();
}

}  // namespace nsel
