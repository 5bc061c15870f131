// One self-contained HTML page: inline CSS, an inline SVG timeline and a tiny inline script
// (no network). The timeline gives every step a column as wide as its slowest worker, so step
// boundaries line up across workers; each worker's bar is split into its top-level ranges.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "analyze/number_text.hpp"
#include "nsel/analyze/render.hpp"

namespace nsel {
namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

using analyze_text::fixed;
using analyze_text::ms;

// A stable, distinct-enough colour per range name.
std::string colour(const std::string& name) {
  unsigned h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return "hsl(" + std::to_string(h % 360) + ",62%,58%)";
}

void table(std::ostringstream& out, const std::vector<std::string>& header,
           const std::vector<std::vector<std::string>>& rows, std::size_t text_columns = 0) {
  out << "<table><thead><tr>";
  for (std::size_t i = 0; i < header.size(); ++i) {
    out << (i < text_columns ? "<th class=t>" : "<th>") << escape(header[i]) << "</th>";
  }
  out << "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    out << "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      out << (i < text_columns || i + 1 == row.size() ? "<td class=t>" : "<td>") << escape(row[i])
          << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

template <typename Row>
void summary_table(std::ostringstream& out, const std::vector<Row>& rows, const std::string& count,
                   const std::string& name) {
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    const DurationStats& s = r.stats;
    cells.push_back({fixed(r.time_percent, 1), std::to_string(s.total), std::to_string(s.count),
                     fixed(s.mean, 1), fixed(s.median, 1), std::to_string(s.min),
                     std::to_string(s.max), fixed(s.stddev, 1), r.name});
  }
  table(out,
        {"Time (%)", "Total Time (ns)", count, "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)",
         "StdDev (ns)", name},
        cells);
}

void timeline(std::ostringstream& out, const ReportSet& set) {
  const StepComparison& c = set.comparison;
  constexpr double kLabelWidth = 280;
  constexpr double kPlotWidth = 960;
  constexpr double kGap = 6;
  constexpr double kMinColumn = 28;
  constexpr double kRow = 30;
  constexpr double kBar = 20;
  constexpr double kTop = 34;

  // Column width proportional to the step's slowest worker, with a floor so short steps show.
  std::vector<long long> slowest;
  long long all = 0;
  for (const StepAcrossWorkers& s : c.steps) {
    long long m = 1;
    for (const auto& d : s.duration_ns) m = std::max(m, d.value_or(0));
    slowest.push_back(m);
    all += m;
  }
  const double usable = kPlotWidth - kGap * static_cast<double>(c.steps.size());
  std::vector<double> x;
  std::vector<double> w;
  double at = kLabelWidth;
  for (long long m : slowest) {
    const double width =
        std::max(kMinColumn, usable * static_cast<double>(m) / static_cast<double>(all));
    x.push_back(at);
    w.push_back(width);
    at += width + kGap;
  }
  const double width = at + 20;
  const double height = kTop + kRow * static_cast<double>(set.processes.size()) + 10;
  out << "<svg id=timeline xmlns='http://www.w3.org/2000/svg' width='" << fixed(width, 0)
      << "' height='" << fixed(height, 0) << "' viewBox='0 0 " << fixed(width, 0) << " "
      << fixed(height, 0) << "'>\n";
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    out << "<line class=boundary x1='" << fixed(x[i], 1) << "' x2='" << fixed(x[i], 1) << "' y1='"
        << kTop - 6 << "' y2='" << fixed(height, 0) << "'/>";
    out << "<text class=stephead x='" << fixed(x[i] + w[i] / 2, 1) << "' y='" << kTop - 12
        << "'>step " << c.steps[i].step << "</text>\n";
  }
  for (std::size_t p = 0; p < set.processes.size(); ++p) {
    const std::string label = set.processes[p].identity.label();
    const double y = kTop + kRow * static_cast<double>(p);
    out << "<text class=worker data-worker='" << escape(label) << "' x='" << kLabelWidth - 8
        << "' y='" << fixed(y + kBar * 0.75, 1) << "'>" << escape(label) << "</text>\n";
    std::map<long long, const StepSummary*> own;
    for (const StepSummary& s : set.processes[p].steps) own[s.step] = &s;
    for (std::size_t i = 0; i < c.steps.size(); ++i) {
      const StepAcrossWorkers& s = c.steps[i];
      if (!s.duration_ns[p]) continue;
      const long long d = *s.duration_ns[p];
      const double bar = w[i] * static_cast<double>(d) / static_cast<double>(slowest[i]);
      const bool straggler =
          std::find(s.stragglers.begin(), s.stragglers.end(), p) != s.stragglers.end();
      out << "<g class='step" << (straggler ? " straggler" : "") << "'>";
      out << "<rect class=stepbar data-worker='" << escape(label) << "' data-step='" << s.step
          << "' x='" << fixed(x[i], 2) << "' y='" << fixed(y, 1) << "' width='" << fixed(bar, 2)
          << "' height='" << kBar << "'><title>" << escape(label) << ", step " << s.step << ": "
          << ms(d) << " ms (median " << fixed(s.median_ns / 1e6, 3) << " ms)"
          << (straggler ? ", straggler" : "") << "</title></rect>";
      // The step's top-level ranges, side by side in the order they first appear.
      const auto found = own.find(s.step);
      if (found != own.end()) {
        double sx = x[i];
        for (const RangeShare& r : found->second->shares) {
          const double rw = bar * static_cast<double>(r.ns) / static_cast<double>(d);
          out << "<rect class=share x='" << fixed(sx, 2) << "' y='" << fixed(y + 3, 1)
              << "' width='" << fixed(rw, 2) << "' height='" << kBar - 6 << "' fill='"
              << colour(r.range) << "'><title>" << escape(r.range) << ": " << ms(r.ns)
              << " ms</title></rect>";
          sx += rw;
        }
      }
      out << "</g>\n";
    }
  }
  out << "</svg>\n";
}

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d232a;background:#fff}
h1{font-size:22px}h2{font-size:18px;margin-top:32px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 14px}th,td{padding:3px 10px;border-bottom:1px solid #e3e6ea}
th{background:#f3f5f7;text-align:right}td{text-align:right;font-variant-numeric:tabular-nums}
td.t,th.t,th:last-child{text-align:left}.note{color:#5c6670}.bad{color:#b3261e}
svg text{font:12px system-ui,sans-serif}.worker{text-anchor:end}.stephead{text-anchor:middle;fill:#5c6670}
.boundary{stroke:#c9ced4;stroke-dasharray:3 3}.stepbar{fill:#dde3ea}
.straggler .stepbar{stroke:#b3261e;stroke-width:2}.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
)";

// Marks each step bar the browser actually laid out with a size, so a headless browser's DOM
// dump shows what was drawn.
constexpr const char* kScript = R"(
document.addEventListener('DOMContentLoaded', function () {
  var drawn = 0;
  document.querySelectorAll('rect.stepbar').forEach(function (r) {
    var box = r.getBoundingClientRect();
    if (box.width > 0 && box.height > 0) { r.setAttribute('data-drawn', 'yes'); drawn++; }
  });
  document.body.setAttribute('data-drawn-bars', String(drawn));
});
)";

}  // namespace

std::string render_html(const ReportSet& set) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
      << "<title>nsel report</title><style>" << kStyle << "</style></head><body>\n";
  out << "<h1>nsel report</h1><p class=note>" << set.processes.size()
      << (set.processes.size() == 1 ? " process" : " processes") << ", "
      << set.comparison.steps.size() << " steps.</p>\n";

  out << "<h2>Steps per worker</h2>\n";
  if (set.comparison.steps.empty()) {
    out << "<p class=note>No step ranges found.</p>\n";
  } else {
    timeline(out, set);
    std::map<std::string, bool> names;
    for (const ProcessSummary& p : set.processes) {
      for (const StepSummary& s : p.steps) {
        for (const RangeShare& r : s.shares) names[r.range] = true;
      }
    }
    out << "<p class=legend>";
    for (const auto& [name, unused] : names) {
      out << "<span><i style='background:" << colour(name) << "'></i>" << escape(name) << "</span>";
    }
    out << "</p>\n";

    std::vector<std::string> header = {"step"};
    for (const ProcessSummary& p : set.processes) header.push_back(p.identity.label() + " (ms)");
    header.push_back("median (ms)");
    header.push_back("slowest");
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<std::string>> stragglers;
    for (const StepAcrossWorkers& s : set.comparison.steps) {
      std::vector<std::string> row = {std::to_string(s.step)};
      for (const auto& d : s.duration_ns) row.push_back(d ? ms(*d) : "-");
      row.push_back(fixed(s.median_ns / 1e6, 3));
      row.push_back(set.processes[s.slowest].identity.label());
      rows.push_back(row);
      for (std::size_t p : s.stragglers) {
        stragglers.push_back(
            {std::to_string(s.step), set.processes[p].identity.label(), ms(*s.duration_ns[p]),
             fixed(s.median_ns / 1e6, 3),
             fixed((static_cast<double>(*s.duration_ns[p]) / s.median_ns - 1.0) * 100.0, 1)});
      }
    }
    out << "<h3>Step time by worker</h3>\n";
    table(out, header, rows);
    out << "<h3>Stragglers (more than " << fixed(set.comparison.straggler_percent, 1)
        << "% above the step's median)</h3>\n";
    if (stragglers.empty()) {
      out << "<p class=note>None.</p>\n";
    } else {
      table(out, {"step", "worker", "time (ms)", "median (ms)", "% above"}, stragglers, 2);
    }
  }

  for (const ProcessSummary& p : set.processes) {
    const ReportIdentity& id = p.identity;
    out << "<h2>" << escape(id.label()) << "</h2>\n<p class=note>worker " << escape(id.worker)
        << ", rank " << (id.rank ? std::to_string(*id.rank) : "-") << ", node "
        << escape(id.node.empty() ? "-" : id.node) << ", pid "
        << (id.pid ? std::to_string(id.pid) : "-") << ", window "
        << (id.window ? id.window->text() : "-") << "<br>" << escape(p.report.string()) << "</p>\n";
    if (!p.steps.empty()) {
      std::vector<std::vector<std::string>> rows;
      for (const StepSummary& s : p.steps) {
        std::string shares;
        for (const RangeShare& r : s.shares) {
          if (!shares.empty()) shares += ", ";
          shares += r.range + " " +
                    fixed(100.0 * static_cast<double>(r.ns) /
                              static_cast<double>(std::max(1LL, s.duration_ns())),
                          1) +
                    "%";
        }
        std::vector<std::string> row = {std::to_string(s.step), ms(s.duration_ns())};
        if (p.has_gpu) {
          row.push_back(ms(s.gpu_busy_ns.value_or(0)));
          row.push_back(ms(s.duration_ns() - s.gpu_busy_ns.value_or(0)));
        }
        row.push_back(shares.empty() ? "-" : shares);
        rows.push_back(row);
      }
      std::vector<std::string> header = {"step", "duration (ms)"};
      if (p.has_gpu) {
        header.push_back("GPU busy (ms)");
        header.push_back("GPU idle (ms)");
      }
      header.push_back("top-level ranges (share of the step)");
      out << "<h3>Steps</h3>\n";
      table(out, header, rows);
    }
    out << "<h3>NVTX ranges</h3>\n";
    if (p.nvtx.empty()) {
      out << "<p class=note>No NVTX data.</p>\n";
    } else {
      summary_table(out, p.nvtx, "Instances", "Range");
    }
    out << "<h3>CUDA kernels</h3>\n";
    if (!p.has_gpu) {
      out << "<p class=note>No GPU data.</p>\n";
    } else {
      summary_table(out, p.kernels, "Instances", "Kernel");
    }
    out << "<h3>OS runtime</h3>\n";
    if (p.osrt.empty()) {
      out << "<p class=note>No OS runtime data.</p>\n";
    } else {
      summary_table(out, p.osrt, "Num Calls", "Name");
    }
  }
  if (!set.failures.empty()) {
    out << "<h2>Not readable</h2>\n<ul>";
    for (const ReportFailure& f : set.failures) out << "<li class=bad>" << escape(f.message);
    out << "</ul>\n";
  }
  out << "<script>" << kScript << "</script>\n</body></html>\n";
  return out.str();
}

}  // namespace nsel
