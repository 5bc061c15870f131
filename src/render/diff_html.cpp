// nsel diff's page: one self-contained HTML file in the look of nsel report's (its style sheet,
// tables and escaping), every chart a static SVG drawn here so the page reads with scripts off.
// Its own style sheet and script are src/render/page/diff.css and diff.js, embedded at build
// time. The small script only measures what the browser laid out (into data- attributes, as nsel
// report's page does, so a headless browser's DOM dump shows it) and sorts tables on a click.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <sstream>
#include <utility>

#include "nsel/render/diff.hpp"
#include "nsel/sys/files.hpp"
#include "render/html_page.hpp"
#include "render/number_text.hpp"
#include "render/page/assets.hpp"
#include "render/run_header.hpp"

namespace nsel {
namespace {

using html_page::escape;

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::string format(const char* pattern, int digits, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, digits, value);
  return buffer;
}

// Nanoseconds in the unit that keeps them below 1000, with three significant digits:
// "812 ns", "1.25 µs", "10.3 ms", "2.00 s".
std::string duration_text(double ns) {
  if (!std::isfinite(ns)) return "-";
  if (ns == 0) return "0 ns";
  static const char* const kUnits[] = {"ns", "µs", "ms", "s"};
  double value = ns;
  std::size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && std::fabs(value) >= 999.5) {
    value /= 1000;
    ++unit;
  }
  const double size = std::fabs(value);
  const int digits = size >= 99.95 ? 0 : size >= 9.995 ? 1 : 2;
  return format("%.*f", digits, value) + " " + kUnits[unit];
}

std::string p_text(double p) {
  if (p >= 0.001) return format("%.3f", p);
  return format("%.1e", p);
}

// A number for a data- attribute or an SVG coordinate: short, locale-free, never "nan".
std::string number(double value) {
  if (!std::isfinite(value)) return "0";
  std::string text = format("%.2f", value);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

std::string attribute_number(double value) {
  return format("%.6g", std::isfinite(value) ? value : 0.0);
}

// One unit for a whole axis: the one that keeps its highest tick below 1000, so that the ticks
// read "0 ms, 50 ms, 100 ms", never "0 ns, 50.0 ms, 100 ms".
struct AxisUnit {
  double ns = 1;
  const char* name = "ns";
};

AxisUnit axis_unit(double highest_ns) {
  static const AxisUnit kUnits[] = {{1, "ns"}, {1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}};
  AxisUnit out = kUnits[0];
  for (const AxisUnit& unit : kUnits) {
    if (std::fabs(highest_ns) / unit.ns >= 1) out = unit;
  }
  return out;
}

// A tick of a round grid in its axis's unit: "50 ms", "2.5 ms".
std::string tick_text(double ns, const AxisUnit& unit) {
  return format("%g", ns / unit.ns) + " " + unit.name;
}

// The smallest of 1, 2, 5, 10, 20, 50, ... at least `value`: a scale's round end.
double round_up(double value) {
  if (!(value > 0) || !std::isfinite(value)) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (double step : {1.0, 2.0, 5.0, 10.0}) {
    if (step * power >= value * (1 - 1e-12)) return step * power;
  }
  return 10 * power;
}

// One table cell: HTML already escaped, aligned left when text.
struct Cell {
  std::string html;
  bool text = false;
  std::string sort;  // the number a click on the header sorts by; "" sorts by the text
};

Cell text_cell(const std::string& text) {
  return {escape(text), true, ""};
}

Cell number_cell(const std::string& text, double sort_by) {
  return {escape(text), false, attribute_number(sort_by)};
}

Cell verdict_cell(ChangeVerdict verdict) {
  const std::string name = std::string(verdict_name(verdict));
  return {"<span class='vd " + name + "'>" + name + "</span>", true, ""};
}

void table_head(std::ostringstream& out, const std::vector<std::pair<std::string, bool>>& header,
                const std::string& id) {
  out << "<div class=wide><table class=sortable id=" << id << "><thead><tr>";
  for (const auto& [name, text] : header) {
    out << (text ? "<th class=t>" : "<th>") << escape(name) << "</th>";
  }
  out << "</tr></thead><tbody>\n";
}

void table_row(std::ostringstream& out, const std::vector<Cell>& cells,
               const std::string& attributes) {
  out << "<tr" << attributes << ">";
  for (const Cell& c : cells) {
    out << (c.text ? "<td class=t" : "<td");
    if (!c.sort.empty()) out << " data-sort=" << c.sort;
    out << ">" << c.html << "</td>";
  }
  out << "</tr>\n";
}

void table_end(std::ostringstream& out) {
  out << "</tbody></table></div>\n";
}

std::string quartiles_text(const Distribution& d) {
  return duration_text(d.q1) + " – " + duration_text(d.q3);
}

std::string distribution_title(const std::string& side, const Distribution& d) {
  return side + ": median " + duration_text(d.median) + ", quartiles " + quartiles_text(d) +
         ", min " + duration_text(d.min) + ", max " + duration_text(d.max) + " over " +
         std::to_string(d.count) + " values";
}

// Both sides of one metric on one scale: min-max whisker, q1-q3 box, median tick; the baseline
// above, the candidate below.
void distribution_svg(std::ostringstream& out, const std::string& metric, const Change& change) {
  constexpr double kWidth = 240, kPad = 6;
  const Distribution& b = change.baseline_steps;
  const Distribution& c = change.candidate_steps;
  double low = std::min(b.min, c.min);
  double high = std::max(b.max, c.max);
  if (b.count == 0) low = c.min, high = c.max;
  if (c.count == 0) low = b.min, high = b.max;
  if (!(high > low)) {
    low -= 1;
    high += 1;
  }
  const auto x = [&](double v) { return kPad + (v - low) / (high - low) * (kWidth - 2 * kPad); };
  out << "<svg class=dist width=" << kWidth << " height=30 viewBox='0 0 " << kWidth
      << " 30' data-metric='" << escape(metric) << "'>";
  const std::pair<const char*, const Distribution*> sides[] = {{"baseline", &b}, {"candidate", &c}};
  double middle = 8;
  for (const auto& [side, d] : sides) {
    if (d->count > 0) {
      out << "<g class=" << side << " data-side=" << side << "><title>"
          << escape(distribution_title(side, *d))
          << "</title><line class=whisker x1=" << number(x(d->min)) << " x2=" << number(x(d->max))
          << " y1=" << number(middle) << " y2=" << number(middle)
          << " /><rect class=box x=" << number(x(d->q1)) << " y=" << number(middle - 4)
          << " width=" << number(x(d->q3) - x(d->q1))
          << " height=8 /><line class=median x1=" << number(x(d->median))
          << " x2=" << number(x(d->median)) << " y1=" << number(middle - 6)
          << " y2=" << number(middle + 6) << " /></g>";
    }
    middle += 14;
  }
  out << "</svg>";
}

void header(std::ostringstream& out, const RunDiff& diff) {
  out << "<h1>nsel diff</h1>\n<table class=sides><thead><tr><th class=t>run</th><th "
         "class=t>paths</th><th>processes</th><th>not readable</th></tr></thead><tbody>\n";
  const std::pair<const char*, const DiffSide*> sides[] = {{"baseline", &diff.baseline},
                                                           {"candidate", &diff.candidate}};
  for (const auto& [name, side] : sides) {
    std::string paths;
    for (const std::string& p : side->paths) {
      paths += (paths.empty() ? "" : "<br>") + escape(p);
    }
    out << "<tr data-side=" << name << "><td class=t>" << name << "</td><td class='t path'>"
        << (paths.empty() ? "-" : paths) << "</td><td>" << side->processes << "</td><td>"
        << side->failures.size() << "</td></tr>\n";
  }
  out << "</tbody></table>\n<p class=run>Baseline r"
      << escape(render_detail::run_header_text(diff.baseline.run).substr(1)) << "<br>Candidate r"
      << escape(render_detail::run_header_text(diff.candidate.run).substr(1))
      << "</p>\n<p class=note>" << diff.pairs.size()
      << (diff.pairs.size() == 1 ? " pair" : " pairs") << " of processes matched by "
      << escape(pairing_rule_text(diff.options.pairing)) << ", " << diff.unpaired.size()
      << " unpaired; " << diff.steps.size() << " steps on both sides.</p>\n";
}

void banner(std::ostringstream& out, const RunDiff& diff) {
  if (diff.metrics.empty()) {
    out << "<div id=verdict class='banner inconclusive' data-verdict=inconclusive "
           "data-change=0><b>Step time: inconclusive</b><br>no step time to compare</div>\n";
    return;
  }
  const Change& c = diff.step_time().change;
  const std::string verdict = std::string(verdict_name(c.verdict));
  out << "<div id=verdict class='banner " << verdict << "' data-verdict=" << verdict
      << " data-change=" << attribute_number(c.change_percent)
      << " data-p=" << attribute_number(c.p_value) << "><b>Step time: " << verdict << ", "
      << render_detail::signed_percent_text(c.change_percent) << "</b> (median "
      << duration_text(c.baseline_steps.median) << " → " << duration_text(c.candidate_steps.median)
      << ")<br>p = " << p_text(c.p_value) << ", two-sided Mann-Whitney U over "
      << c.baseline_steps.count << " and " << c.candidate_steps.count
      << " steps (each the median across the paired processes); alpha "
      << format("%g", diff.options.alpha) << ", minimum change "
      << format("%g", diff.options.min_change_percent) << " %, at least " << diff.options.min_steps
      << " steps a side";
  if (!c.reason.empty()) out << "<br><span class=reason>" << escape(c.reason) << "</span>";
  out << "</div>\n";
}

void metrics_table(std::ostringstream& out, const RunDiff& diff) {
  out << "<h2>Metrics</h2>\n<p class=note>Per step, the median across the paired processes; "
         "the chart: min-max, quartiles and median of those per-step values, <i class=sw "
         "style='background:#4e79a7'></i>baseline above, <i class=sw "
         "style='background:#f28e2b'></i>candidate below, one scale per row.</p>\n";
  if (diff.metrics.empty()) {
    out << "<p class=note>No metrics.</p>\n";
    return;
  }
  table_head(out,
             {{"metric", true},
              {"baseline median", false},
              {"baseline quartiles", false},
              {"candidate median", false},
              {"candidate quartiles", false},
              {"change", false},
              {"p", false},
              {"verdict", true},
              {"distribution", true}},
             "metrics");
  for (const MetricDiff& m : diff.metrics) {
    const Change& c = m.change;
    std::ostringstream chart;
    distribution_svg(chart, m.name, c);
    Cell verdict = verdict_cell(c.verdict);
    if (!c.reason.empty()) verdict.html += "<br><span class=reason>" + escape(c.reason) + "</span>";
    table_row(out,
              {text_cell(m.name),
               number_cell(duration_text(c.baseline_steps.median), c.baseline_steps.median),
               number_cell(quartiles_text(c.baseline_steps), c.baseline_steps.q1),
               number_cell(duration_text(c.candidate_steps.median), c.candidate_steps.median),
               number_cell(quartiles_text(c.candidate_steps), c.candidate_steps.q1),
               number_cell(render_detail::signed_percent_text(c.change_percent), c.change_percent),
               number_cell(p_text(c.p_value), c.p_value), verdict, Cell{chart.str(), true, ""}},
              " data-metric='" + escape(m.name) +
                  "' data-verdict=" + std::string(verdict_name(c.verdict)) +
                  " data-change=" + attribute_number(c.change_percent));
  }
  table_end(out);
}

std::string steps_list(const std::vector<long long>& steps) {
  std::string out;
  for (long long s : steps) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

// Per step: both medians as lines, the min-max band across ranks under each.
void steps_chart(std::ostringstream& out, const RunDiff& diff) {
  out << "<h2>Step time per step</h2>\n";
  if (diff.steps.empty()) {
    out << "<p class=note>No step both runs have.</p>\n";
  } else {
    constexpr double kWidth = 960, kHeight = 260, kLeft = 70, kRight = 12, kTop = 10, kBottom = 30;
    const double plot_width = kWidth - kLeft - kRight, plot_height = kHeight - kTop - kBottom;
    double highest = 0;
    for (const StepDiff& s : diff.steps) {
      highest = std::max({highest, s.baseline.max, s.candidate.max});
    }
    // Grid lines at a round step, as few as reach above the slowest rank: the lines keep most
    // of the height.
    const double grid = round_up(highest / 4);
    const int lines = std::max(1, static_cast<int>(std::ceil(highest / grid - 1e-9)));
    const double top = grid * lines;
    const double slot = plot_width / static_cast<double>(diff.steps.size());
    const auto x = [&](std::size_t i) { return kLeft + (static_cast<double>(i) + 0.5) * slot; };
    const auto y = [&](double ns) { return kTop + plot_height * (1 - ns / top); };
    const AxisUnit unit = axis_unit(top);
    out << "<div class=wide><svg id=steps class=chart width=" << kWidth << " height=" << kHeight
        << " viewBox='0 0 " << kWidth << " " << kHeight << "'>";
    for (int t = 0; t <= lines; ++t) {
      const double ns = grid * t;
      out << "<line class=grid x1=" << kLeft << " x2=" << kWidth - kRight << " y1=" << number(y(ns))
          << " y2=" << number(y(ns)) << " /><text class=ytick x=" << kLeft - 6
          << " y=" << number(y(ns) + 4) << ">" << tick_text(ns, unit) << "</text>";
    }
    // Every k-th step number, k of 1, 2, 5, 10, ... so that the numbers keep apart.
    std::size_t longest = 1;
    for (const StepDiff& s : diff.steps) {
      longest = std::max(longest, std::to_string(s.step).size());
    }
    long long every = 1;
    while (every * slot < static_cast<double>(longest) * 7 + 8) {
      every = static_cast<long long>(round_up(static_cast<double>(every) + 0.5));
    }
    for (std::size_t i = 0; i < diff.steps.size(); ++i) {
      if (diff.steps[i].step % every != 0) continue;
      out << "<text class=xtick x=" << number(x(i)) << " y=" << kHeight - kBottom + 16 << ">"
          << diff.steps[i].step << "</text>";
    }
    const std::pair<const char*, Distribution StepDiff::*> sides[] = {
        {"baseline", &StepDiff::baseline}, {"candidate", &StepDiff::candidate}};
    for (const auto& [side, pick] : sides) {
      std::string band, line;
      for (std::size_t i = 0; i < diff.steps.size(); ++i) {
        band += number(x(i)) + "," + number(y((diff.steps[i].*pick).max)) + " ";
        line += number(x(i)) + "," + number(y((diff.steps[i].*pick).median)) + " ";
      }
      for (std::size_t i = diff.steps.size(); i-- > 0;) {
        band += number(x(i)) + "," + number(y((diff.steps[i].*pick).min)) + " ";
      }
      out << "<polygon class='band " << side << "' points='" << band << "' />"
          << "<polyline class='line " << side << "' points='" << line << "' />";
    }
    const double radius = std::clamp(slot / 3, 1.0, 3.0);
    for (std::size_t i = 0; i < diff.steps.size(); ++i) {
      const StepDiff& s = diff.steps[i];
      out << "<g class=stepcol data-step=" << s.step
          << " data-change=" << attribute_number(s.change_percent) << "><title>step " << s.step
          << ": " << duration_text(s.baseline.median) << " → " << duration_text(s.candidate.median)
          << " (" << render_detail::signed_percent_text(s.change_percent)
          << "); across ranks baseline " << duration_text(s.baseline.min) << " – "
          << duration_text(s.baseline.max) << ", candidate " << duration_text(s.candidate.min)
          << " – " << duration_text(s.candidate.max) << "</title>";
      const std::pair<const char*, const Distribution*> points[] = {{"baseline", &s.baseline},
                                                                    {"candidate", &s.candidate}};
      for (const auto& [side, d] : points) {
        out << "<circle class=" << side << " data-side=" << side
            << " data-median=" << attribute_number(d->median) << " cx=" << number(x(i))
            << " cy=" << number(y(d->median)) << " r=" << number(radius) << " />";
      }
      out << "</g>";
    }
    out << "</svg></div>\n<p class=note><i class=sw style='background:#4e79a7'></i>baseline "
           "<i class=sw style='background:#f28e2b'></i>candidate: the median across the paired "
           "processes, the band from the fastest to the slowest of them.</p>\n";
  }
  if (!diff.steps_only_in_baseline.empty()) {
    out << "<p class=note id=steps-only-baseline>Steps only in the baseline: "
        << steps_list(diff.steps_only_in_baseline) << "</p>\n";
  }
  if (!diff.steps_only_in_candidate.empty()) {
    out << "<p class=note id=steps-only-candidate>Steps only in the candidate: "
        << steps_list(diff.steps_only_in_candidate) << "</p>\n";
  }
}

std::string optional_change(const std::optional<Change>& change) {
  if (!change) return "-";
  return render_detail::signed_percent_text(change->change_percent) + " (" +
         std::string(verdict_name(change->verdict)) + ")";
}

constexpr std::size_t kOutOfLineListed = 12;

// A pair's label, split so that its end (" rank 12", else its last 8 characters) is never cut
// off: only the start shrinks to an ellipsis when the label is wider than its column, as in
// nsel report's worker labels.
std::string rank_label(const std::string& key) {
  std::size_t cut = key.rfind(" rank ");
  if (cut == std::string::npos) cut = key.size() > 8 ? key.size() - 8 : 0;
  return "<span class=rl title='" + escape(key) + "'><span class=ra>" + escape(key.substr(0, cut)) +
         "</span><span class=rz>" + escape(key.substr(cut)) + "</span></span>";
}

// The pairs whose own verdict is faster or slower and not the job's (whose change is `job`), the
// furthest from the job first; past kOutOfLineListed, only counted.
void out_of_line_list(std::ostringstream& out, const RunDiff& diff, double job) {
  std::vector<const ProcessPairDiff*> out_of_line;
  for (const ProcessPairDiff& p : diff.pairs) {
    if (p.out_of_line) out_of_line.push_back(&p);
  }
  if (out_of_line.empty()) {
    out << "<p class=note id=out-of-line>No rank's verdict differs from the job's.</p>\n";
    return;
  }
  // Short: the furthest from the job first, the rest only outlined in the chart.
  std::stable_sort(out_of_line.begin(), out_of_line.end(),
                   [](const ProcessPairDiff* a, const ProcessPairDiff* b) {
                     return std::fabs(a->change_vs_job_points) > std::fabs(b->change_vs_job_points);
                   });
  const std::size_t shown = std::min(out_of_line.size(), kOutOfLineListed);
  out << "<p>" << out_of_line.size() << (out_of_line.size() == 1 ? " pair" : " pairs")
      << " out of line with the job (" << render_detail::signed_percent_text(job)
      << "): their own verdict is faster or slower and not the job's"
      << (shown < out_of_line.size() ? "; the " + std::to_string(shown) + " furthest from it:"
                                     : ":")
      << "</p>\n<ul id=out-of-line data-count=" << out_of_line.size() << ">";
  for (std::size_t i = 0; i < shown; ++i) {
    const ProcessPairDiff* p = out_of_line[i];
    out << "<li data-pair='" << escape(p->key) << "'><b>" << escape(p->key)
        << "</b>: " << render_detail::signed_percent_text(p->step.change_percent) << ", "
        << std::string(verdict_name(p->step.verdict)) << ", p = " << p_text(p->step.p_value) << " ("
        << format("%+.1f", p->change_vs_job_points) << " points from the job)</li>";
  }
  if (shown < out_of_line.size()) {
    out << "<li class=note>and " << out_of_line.size() - shown
        << " more, outlined in the chart and in bold in the table below</li>";
  }
  out << "</ul>\n";
}

// One row per pair: its step change as a bar from a zero line in the middle, on one scale that
// holds the largest change (and the job's, a dashed line), then the key to the colours.
void rank_bars(std::ostringstream& out, const RunDiff& diff, double job) {
  double largest = std::fabs(job);
  for (const ProcessPairDiff& p : diff.pairs) {
    largest = std::max(largest, std::fabs(p.step.change_percent));
  }
  const double end = round_up(std::max(largest, 1.0));
  constexpr double kWidth = 600, kZero = kWidth / 2, kHalf = kZero - 8;
  const auto x = [&](double percent) { return kZero + percent / end * kHalf; };

  out << "<div id=ranks class=rk-chart>\n<div class=rk-head><span class=rl></span><svg "
         "class=rb width="
      << kWidth << " height=18 viewBox='0 0 " << kWidth << " 18'>";
  // The end ticks lean inwards so that they stay inside the chart.
  const double ticks[] = {-end, -end / 2, 0.0, end / 2, end};
  for (double tick : ticks) {
    const char* anchor = tick == -end ? " class=first" : tick == end ? " class=last" : "";
    out << "<text" << anchor << " x="
        << number(tick == -end  ? 2
                  : tick == end ? kWidth - 2
                                : x(tick))
        << " y=13>" << (tick == 0 ? "0 %" : format("%+g %%", tick)) << "</text>";
  }
  out << "</svg></div>\n";
  for (const ProcessPairDiff& p : diff.pairs) {
    const double change = p.step.change_percent;
    const double left = std::min(x(change), kZero), right = std::max(x(change), kZero);
    const std::string verdict = std::string(verdict_name(p.step.verdict));
    const std::string key = escape(p.key);
    out << "<div class='rk" << (p.out_of_line ? " out" : "") << "' data-pair='" << key << "'>"
        << rank_label(p.key) << "<svg class=rb width=" << kWidth << " height=18 viewBox='0 0 "
        << kWidth << " 18' data-zero=" << kZero << "><line class=zero x1=" << kZero
        << " x2=" << kZero << " y1=0 y2=18 /><line class=job x1=" << number(x(job))
        << " x2=" << number(x(job)) << " y1=0 y2=18 /><rect class='bar " << verdict
        << "' data-pair='" << key << "' data-change=" << attribute_number(change)
        << " data-verdict=" << verdict << " data-out-of-line=" << (p.out_of_line ? "yes" : "no")
        << " x=" << number(left) << " y=3 width=" << number(right - left) << " height=12><title>"
        << key << ": " << render_detail::signed_percent_text(change) << " ("
        << duration_text(p.step.baseline_steps.median) << " → "
        << duration_text(p.step.candidate_steps.median) << "), " << verdict
        << ", p = " << p_text(p.step.p_value) << "</title></rect></svg><span class=rv>"
        << render_detail::signed_percent_text(change) << "</span></div>\n";
  }
  out << "</div>\n<p class=note>Bars: each pair's step time change, <i class=sw "
         "style='background:#2e7d32'></i>faster <i class=sw "
         "style='background:#b3261e'></i>slower <i class=sw "
         "style='background:#9aa3ad'></i>unchanged or inconclusive; the dashed line is the "
         "job's change; out-of-line pairs are outlined.</p>\n";
}

// Every pair in a sortable table: how it was paired, its step medians and change, and the
// changes of its compute and communication.
void pairs_table(std::ostringstream& out, const RunDiff& diff) {
  out << "<h3>Pairs</h3>\n";
  table_head(out,
             {{"pair", true},
              {"paired by", true},
              {"baseline median", false},
              {"candidate median", false},
              {"change", false},
              {"p", false},
              {"verdict", true},
              {"compute", false},
              {"communication", false}},
             "pairs");
  for (const ProcessPairDiff& p : diff.pairs) {
    Cell name = text_cell(p.key);
    name.html = "<span class=nm title='" + name.html + "'>" + name.html + "</span>";
    table_row(
        out,
        {name, text_cell(p.paired_by),
         number_cell(duration_text(p.step.baseline_steps.median), p.step.baseline_steps.median),
         number_cell(duration_text(p.step.candidate_steps.median), p.step.candidate_steps.median),
         number_cell(render_detail::signed_percent_text(p.step.change_percent),
                     p.step.change_percent),
         number_cell(p_text(p.step.p_value), p.step.p_value), verdict_cell(p.step.verdict),
         number_cell(optional_change(p.compute), p.compute ? p.compute->change_percent : 0),
         number_cell(optional_change(p.communication),
                     p.communication ? p.communication->change_percent : 0)},
        std::string(" data-pair='") + escape(p.key) + "'" + (p.out_of_line ? " class=out" : ""));
  }
  table_end(out);
}

// The step time per rank: the out-of-line pairs, every pair's change as a bar, the pairs' table.
void ranks_chart(std::ostringstream& out, const RunDiff& diff) {
  out << "<h2>Step time per rank</h2>\n";
  if (diff.pairs.empty()) {
    out << "<p class=note>No processes were paired.</p>\n";
    return;
  }
  const double job = diff.metrics.empty() ? 0 : diff.step_time().change.change_percent;
  out_of_line_list(out, diff, job);
  rank_bars(out, diff, job);
  pairs_table(out, diff);
}

constexpr std::size_t kTopRows = 25;

void totals_table(std::ostringstream& out, const std::vector<TotalsDiff>& rows,
                  const std::string& title, const std::string& what, const std::string& id,
                  const std::string& csv) {
  out << "<h2>" << title << "</h2>\n";
  if (rows.empty()) {
    out << "<p class=note>None in either run.</p>\n";
    return;
  }
  table_head(out,
             {{what, true},
              {"count", false},
              {"count change", false},
              {"total", false},
              {"total change", false},
              {"mean", false},
              {"p (mean)", false},
              {"verdict (mean)", true}},
             id);
  for (std::size_t i = 0; i < rows.size() && i < kTopRows; ++i) {
    const TotalsDiff& t = rows[i];
    Cell name = text_cell(t.name);
    name.html = "<span class=nm title='" + name.html + "'>" + name.html + "</span>";
    if (t.communication) name.html += " <span class=tag title='communication kernel'>comm</span>";
    const bool fresh = t.baseline.total == 0 && t.candidate.total > 0;
    table_row(
        out,
        {name,
         number_cell(std::to_string(t.baseline.count) + " → " + std::to_string(t.candidate.count),
                     static_cast<double>(t.candidate.count)),
         number_cell((t.count_change > 0 ? "+" : "") + std::to_string(t.count_change),
                     static_cast<double>(t.count_change)),
         number_cell(duration_text(static_cast<double>(t.baseline.total)) + " → " +
                         duration_text(static_cast<double>(t.candidate.total)),
                     static_cast<double>(t.candidate.total)),
         number_cell(fresh ? "new" : render_detail::signed_percent_text(t.total_change_percent),
                     t.total_change_percent),
         number_cell(duration_text(t.baseline.mean) + " → " + duration_text(t.candidate.mean),
                     t.candidate.mean),
         number_cell(p_text(t.mean_p_value), t.mean_p_value), verdict_cell(t.mean_verdict)},
        " data-" + std::string(id == "kernels" ? "kernel" : "range") + "='" + escape(t.name) +
            "' data-verdict=" + std::string(verdict_name(t.mean_verdict)) +
            (t.communication ? " data-communication=yes" : ""));
  }
  table_end(out);
  if (rows.size() > kTopRows) {
    const std::size_t more = rows.size() - kTopRows;
    out << "<p class=note data-more=" << more << ">The top " << kTopRows << " by change; " << more
        << " more " << (more == 1 ? "row is" : "rows are") << " in the JSON output and " << csv
        << ".</p>\n";
  }
}

void unpaired_and_failures(std::ostringstream& out, const RunDiff& diff) {
  out << "<h2>Unpaired processes</h2>\n";
  if (diff.unpaired.empty()) {
    out << "<p class=note id=unpaired>None: every process has its pair.</p>\n";
  } else {
    table_head(out, {{"side", true}, {"key", true}, {"label", true}, {"report", true}}, "unpaired");
    for (const UnpairedProcess& u : diff.unpaired) {
      table_row(
          out,
          {text_cell(u.side), text_cell(u.key), text_cell(u.label), text_cell(u.report.string())},
          " data-unpaired='" + escape(u.label) + "' data-side='" + escape(u.side) + "'");
    }
    table_end(out);
  }
  out << "<h2>Not readable</h2>\n";
  if (diff.baseline.failures.empty() && diff.candidate.failures.empty()) {
    out << "<p class=note id=failures>Every report of both runs was read.</p>\n";
    return;
  }
  const std::pair<const char*, const DiffSide*> sides[] = {{"baseline", &diff.baseline},
                                                           {"candidate", &diff.candidate}};
  for (const auto& [name, side] : sides) {
    out << "<h3>" << name << "</h3>\n";
    if (side->failures.empty()) {
      out << "<p class=note>None.</p>\n";
      continue;
    }
    out << "<ul>";
    for (const ReportFailure& f : side->failures) {
      out << "<li class=bad data-failure=" << name << ">" << escape(f.report.string()) << ": "
          << escape(f.message) << "</li>";
    }
    out << "</ul>\n";
  }
}

}  // namespace

std::string render_diff_html(const RunDiff& diff) {
  std::ostringstream body;
  header(body, diff);
  banner(body, diff);
  metrics_table(body, diff);
  steps_chart(body, diff);
  ranks_chart(body, diff);
  totals_table(body, diff.kernels, "CUDA kernels", "kernel", "kernels", "diff_kernels.csv");
  totals_table(body, diff.nvtx, "NVTX ranges", "range", "nvtx", "diff_nvtx.csv");
  unpaired_and_failures(body, diff);
  return html_page::page("nsel diff", page_assets::diff_css, body.str(), page_assets::diff_js);
}

void write_diff_html(const RunDiff& diff, const std::filesystem::path& file) {
  write_file_atomically(file, render_diff_html(diff));
}

}  // namespace nsel
