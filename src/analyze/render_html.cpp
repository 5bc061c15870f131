// One self-contained HTML page: inline CSS, an inline SVG timeline and a tiny inline script
// (no network). The timeline gives every step a column as wide as its slowest worker, so step
// boundaries line up across workers; each worker's bar is split into its top-level ranges.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "analyze/html_page.hpp"
#include "analyze/number_text.hpp"
#include "nsel/analyze/render.hpp"

namespace nsel {
namespace {

using analyze_text::fixed;
using analyze_text::ms;
using html_page::escape;
using html_page::kStyle;
using html_page::table;

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

// A range named after its step ("data copy in 5" in step 5) under the name of all of them
// ("data copy in {n}"), so the legend holds one entry for it, not one per step. The analysis
// already groups names this way; this is for names it left as they were.
std::string grouped_range(const std::string& name, long long step) {
  const std::string number = std::to_string(step);
  for (std::size_t at = name.rfind(number); at != std::string::npos;
       at = at == 0 ? std::string::npos : name.rfind(number, at - 1)) {
    const std::size_t after = at + number.size();
    const bool starts = at == 0 || !std::isdigit(static_cast<unsigned char>(name[at - 1]));
    const bool ends =
        after == name.size() || !std::isdigit(static_cast<unsigned char>(name[after]));
    if (starts && ends) return name.substr(0, at) + "{n}" + name.substr(after);
  }
  return name;
}

// Colours that stay apart from each other for the names with the most time; the rest are grey
// (each still named in its tooltip).
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                    "#b07aa1", "#edc948", "#76b7b2", "#ff9da7",
                                    "#9c755f", "#2f4b7c", "#bcbd22", "#17becf"};
constexpr std::size_t kColoured = sizeof kPalette / sizeof kPalette[0];
constexpr const char* kOtherColour = "#b8bec6";

// The distinct top-level range names after grouping, by total time over every step and process.
struct RangeNames {
  std::vector<std::string> names;
  std::vector<long long> totals;
  std::map<std::string, std::size_t> index;
  // Grouped names that stand for ranges of at least two steps; one that would hold a single
  // step's range ("layer 12" in step 12, while every step has a "layer 12") is no group.
  std::set<std::string> groups;
  std::string colour(std::size_t i) const { return i < kColoured ? kPalette[i] : kOtherColour; }
  std::string name_of(const std::string& range, long long step) const {
    std::string grouped = grouped_range(range, step);
    return groups.count(grouped) ? grouped : range;
  }
  std::size_t of(const std::string& range, long long step) const {
    return index.at(name_of(range, step));
  }
};

RangeNames range_names(const ReportSet& set) {
  RangeNames out;
  std::map<std::string, std::set<long long>> steps_of;
  for (const ProcessSummary& p : set.processes) {
    for (const StepSummary& s : p.steps) {
      for (const RangeShare& r : s.shares) {
        const std::string grouped = grouped_range(r.range, s.step);
        if (grouped != r.range) steps_of[grouped].insert(s.step);
      }
    }
  }
  for (const auto& [grouped, steps] : steps_of) {
    if (steps.size() >= 2) out.groups.insert(grouped);
  }
  std::map<std::string, long long> totals;
  for (const ProcessSummary& p : set.processes) {
    for (const StepSummary& s : p.steps) {
      for (const RangeShare& r : s.shares) totals[out.name_of(r.range, s.step)] += r.ns;
    }
  }
  std::vector<std::pair<std::string, long long>> order(totals.begin(), totals.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [name, total] : order) {
    out.index[name] = out.names.size();
    out.names.push_back(name);
    out.totals.push_back(total);
  }
  return out;
}

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

double rounded(double value) {
  return std::round(value * 1e4) / 1e4;
}

// Per step, the median across processes of the GPU's busy time and of its communication time,
// each as a fraction of the process's own step.
struct GpuMedians {
  std::optional<double> busy;
  std::optional<double> communication;
  std::optional<double> wait_ns;
};

std::vector<GpuMedians> gpu_medians(const ReportSet& set) {
  std::vector<GpuMedians> out;
  for (const StepAcrossWorkers& s : set.comparison.steps) {
    std::vector<double> busy;
    std::vector<double> communication;
    std::vector<double> wait;
    for (const ProcessSummary& p : set.processes) {
      for (const StepSummary& own : p.steps) {
        if (own.step != s.step || own.duration_ns() <= 0) continue;
        const double d = static_cast<double>(own.duration_ns());
        if (own.gpu_busy_ns) busy.push_back(static_cast<double>(*own.gpu_busy_ns) / d);
        if (own.communication_ns) {
          communication.push_back(static_cast<double>(*own.communication_ns) / d);
        }
      }
    }
    for (const auto& w : s.communication_wait_ns) {
      if (w) wait.push_back(static_cast<double>(*w));
    }
    out.push_back({median(busy), median(communication), median(wait)});
  }
  return out;
}

nlohmann::json optional_number(const std::optional<long long>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// The label split so that its end (the PID or rank after the last '/') is never cut off: only
// the start shrinks to an ellipsis when the label column is too narrow.
void worker_label(std::ostringstream& out, const std::string& label, int row) {
  const std::size_t slash = label.rfind('/');
  const std::size_t cut =
      slash == std::string::npos ? (label.size() > 8 ? label.size() - 8 : label.size()) : slash;
  out << "<div class=wl title='" << escape(label) << "' style='height:" << row
      << "px;line-height:" << row << "px'><span class=wa>" << escape(label.substr(0, cut))
      << "</span><span class=wb>" << escape(label.substr(cut)) << "</span></div>\n";
}

// The kernel summary, one row per full name, grid and block (those two columns when known).
void kernel_table(std::ostringstream& out, const std::vector<KernelRow>& kernels) {
  bool shapes = false;
  for (const KernelRow& k : kernels) shapes = shapes || !k.grid.empty() || !k.block.empty();
  std::vector<std::vector<std::string>> cells;
  for (const KernelRow& k : kernels) {
    const DurationStats& s = k.stats;
    std::vector<std::string> row = {fixed(k.time_percent, 1), std::to_string(s.total),
                                    std::to_string(s.count),  fixed(s.mean, 1),
                                    fixed(s.median, 1),       std::to_string(s.min),
                                    std::to_string(s.max),    fixed(s.stddev, 1)};
    if (shapes) {
      row.push_back(k.grid);
      row.push_back(k.block);
    }
    row.push_back(k.name);
    cells.push_back(row);
  }
  std::vector<std::string> header = {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)",
                                     "Med (ns)", "Min (ns)",        "Max (ns)",  "StdDev (ns)"};
  if (shapes) {
    header.push_back("GridXYZ");
    header.push_back("BlockXYZ");
  }
  header.push_back("Kernel");
  table(out, header, cells);
}

void timeline(std::ostringstream& out, const ReportSet& set, const RangeNames& names,
              const std::vector<GpuMedians>& medians) {
  const StepComparison& c = set.comparison;
  const std::size_t processes = set.processes.size();
  bool any_gpu = false;
  for (const ProcessSummary& p : set.processes) any_gpu = any_gpu || p.has_gpu;
  // Rows shrink with more processes, down to a height that still holds a label.
  const int row = processes <= 16 ? 26 : std::max(18, static_cast<int>(416 / processes));
  const int head = 20;
  const int band = any_gpu ? 36 : 0;
  const int top = head + (band > 0 ? band + 10 : 2);

  nlohmann::json data;
  data["row"] = row;
  data["head"] = head;
  data["band"] = band;
  data["top"] = top;
  data["names"] = names.names;
  nlohmann::json colours = nlohmann::json::array();
  for (std::size_t i = 0; i < names.names.size(); ++i) colours.push_back(names.colour(i));
  data["colours"] = colours;
  nlohmann::json steps = nlohmann::json::array();
  nlohmann::json slowest = nlohmann::json::array();
  nlohmann::json step_medians = nlohmann::json::array();
  nlohmann::json gpu = nlohmann::json::array();
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const StepAcrossWorkers& s = c.steps[i];
    long long m = 1;
    for (const auto& d : s.duration_ns) m = std::max(m, d.value_or(0));
    steps.push_back(s.step);
    slowest.push_back(m);
    step_medians.push_back(s.median_ns);
    const GpuMedians& g = medians[i];
    gpu.push_back(
        g.busy ? nlohmann::json::array(
                     {rounded(*g.busy), g.communication ? nlohmann::json(rounded(*g.communication))
                                                        : nlohmann::json(nullptr)})
               : nlohmann::json(nullptr));
  }
  data["steps"] = steps;
  data["slowest"] = slowest;
  data["median"] = step_medians;
  data["gpu"] = gpu;
  nlohmann::json procs = nlohmann::json::array();
  for (std::size_t p = 0; p < processes; ++p) {
    std::map<long long, const StepSummary*> own;
    for (const StepSummary& s : set.processes[p].steps) own[s.step] = &s;
    nlohmann::json cells = nlohmann::json::array();
    for (std::size_t i = 0; i < c.steps.size(); ++i) {
      const StepAcrossWorkers& s = c.steps[i];
      if (!s.duration_ns[p]) continue;
      const bool straggler =
          std::find(s.stragglers.begin(), s.stragglers.end(), p) != s.stragglers.end();
      nlohmann::json wait = nullptr;
      if (p < s.communication_wait_ns.size() && s.communication_wait_ns[p]) {
        wait = *s.communication_wait_ns[p];
      }
      nlohmann::json shares = nlohmann::json::array();
      nlohmann::json busy = nullptr;
      nlohmann::json communication = nullptr;
      const auto found = own.find(s.step);
      if (found != own.end()) {
        const StepSummary& step = *found->second;
        busy = optional_number(step.gpu_busy_ns);
        communication = optional_number(step.communication_ns);
        // Side by side in the order they began in the step.
        std::vector<const RangeShare*> order;
        for (const RangeShare& r : step.shares) order.push_back(&r);
        std::stable_sort(order.begin(), order.end(), [](const RangeShare* a, const RangeShare* b) {
          return a->first_start_ns < b->first_start_ns;
        });
        for (const RangeShare* r : order) {
          shares.push_back(names.of(r->range, s.step));
          shares.push_back(r->ns);
        }
      }
      cells.push_back({i, *s.duration_ns[p], busy, communication, wait, straggler ? 1 : 0, shares});
    }
    procs.push_back({{"label", set.processes[p].identity.label()}, {"cells", cells}});
  }
  data["procs"] = procs;

  out << "<div id=timeline class=tl>\n<div class=tl-controls>"
      << "<button type=button data-zoom=out title='zoom out'>&minus;</button>"
      << "<button type=button data-zoom=in title='zoom in'>+</button>"
      << "<button type=button data-zoom=fit title='every step in the width, or columns at their "
         "least width (12 px) when they do not fit'>fit</button>"
      << "<span class=note id=zoomtext></span><span class=note>ctrl + wheel zooms at the "
         "pointer; scroll sideways for more steps</span></div>\n"
      << "<div class=tl-body><div class=tl-labels><div class=tl-head style='height:" << top
      << "px'><div class=wl style='height:" << head << "px;line-height:" << head
      << "px'>step</div>";
  if (band > 0) {
    out << "<div class='wl bandlabel' style='height:" << band << "px;line-height:" << band
        << "px' title='per step, the median across processes of the GPU busy share (dark) and "
           "of the communication share (magenta) of the step'>GPU per step (median)</div>";
  }
  out << "</div>\n";
  for (const ProcessSummary& p : set.processes) worker_label(out, p.identity.label(), row);
  out << "</div><div class=tl-scroll><svg id=plot xmlns='http://www.w3.org/2000/svg' width=0 "
         "height=0></svg></div></div>\n"
      << "<noscript><p class=note>The timeline is drawn by the page's script; the tables below "
         "hold the same numbers.</p></noscript>\n"
      << "<p class=note><i class=sw style='background:#dde3ea'></i>bar: the step, as long as "
         "its slowest worker's column, split into its top-level ranges "
      << "<i class=sw style='outline:2px solid #b3261e'></i>straggler";
  if (any_gpu) {
    bool communicated = false;
    for (const ProcessSummary& p : set.processes) {
      for (const StepSummary& s : p.steps) {
        communicated = communicated || s.communication_ns.value_or(0) > 0;
      }
    }
    out << "<br>strip under the bar: GPU <i class=sw style='background:#455a64'></i>busy "
        << (communicated ? "<i class=sw style='background:#d81b60'></i>of it communication " : "")
        << "<i class=sw style='background:#e3e6ea'></i>idle";
  }
  out << "</p>\n</div>\n";
  // '<' written as its JSON escape, so no name can end the script element early.
  std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(json.size());
  for (char ch : json) {
    if (ch == '<') {
      safe += "\\u003c";
    } else {
      safe += ch;
    }
  }
  out << "<script type=application/json id=nsel-data>" << safe << "</script>\n";
}

void legend(std::ostringstream& out, const RangeNames& names) {
  out << "<p class=legend>";
  for (std::size_t i = 0; i < names.names.size() && i < kColoured; ++i) {
    out << "<span class=entry title='" << escape(names.names[i]) << ": " << ms(names.totals[i])
        << " ms over all steps and processes'><i style='background:" << names.colour(i) << "'></i>"
        << escape(names.names[i]) << "</span>";
  }
  if (names.names.size() > kColoured) {
    std::string rest;
    for (std::size_t i = kColoured; i < names.names.size(); ++i) {
      if (!rest.empty()) rest += ", ";
      rest += names.names[i];
    }
    const std::size_t count = names.names.size() - kColoured;
    out << "<span class='entry other' title='" << escape(rest)
        << "'><i style='background:" << kOtherColour << "'></i>" << count
        << (count == 1 ? " other range" : " other ranges") << "</span>";
  }
  out << "</p>\n";
}

std::string percent(double fraction) {
  return fixed(100.0 * fraction, 1);
}

void gpu_table(std::ostringstream& out, const ReportSet& set,
               const std::vector<GpuMedians>& medians) {
  bool any_busy = false;
  bool any_communication = false;
  bool any_wait = false;
  for (const GpuMedians& g : medians) {
    any_busy = any_busy || g.busy.has_value();
    any_wait = any_wait || g.wait_ns.has_value();
  }
  // Communication columns only where some process communicated: a job without NCCL gets no
  // column of zeros.
  for (const ProcessSummary& p : set.processes) {
    for (const StepSummary& s : p.steps) {
      any_communication = any_communication || s.communication_ns.value_or(0) > 0;
    }
  }
  if (!any_busy) return;
  std::vector<std::string> header = {"step", "median step (ms)", "GPU busy (%)", "GPU idle (%)"};
  any_wait = any_wait && any_communication;
  if (any_communication) header.push_back("communication (%)");
  if (any_wait) header.push_back("communication wait (ms)");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < medians.size(); ++i) {
    const GpuMedians& g = medians[i];
    std::vector<std::string> row = {std::to_string(set.comparison.steps[i].step),
                                    fixed(set.comparison.steps[i].median_ns / 1e6, 3)};
    row.push_back(g.busy ? percent(*g.busy) : "-");
    row.push_back(g.busy ? percent(1.0 - *g.busy) : "-");
    if (any_communication) row.push_back(g.communication ? percent(*g.communication) : "-");
    if (any_wait) row.push_back(g.wait_ns ? fixed(*g.wait_ns / 1e6, 3) : "-");
    rows.push_back(row);
  }
  out << "<h3>GPU per step (median across processes, % of the step)</h3>\n<div class=wide>";
  table(out, header, rows, 0, false);
  out << "</div>\n";
}

// Draws the timeline from the page's data: column widths from the zoom, every k-th step header
// so that none overlap, and after each drawing marks what the browser laid out with a size (the
// bars, the GPU strips, the header boxes), so a headless browser's DOM dump shows what was drawn.
constexpr const char* kScript = R"(
(function () {
  var holder = document.getElementById('nsel-data');
  if (!holder) { document.body.setAttribute('data-drawn-bars', '0'); return; }
  var D = JSON.parse(holder.textContent);
  var NS = 'http://www.w3.org/2000/svg';
  var scroller = document.querySelector('#timeline .tl-scroll');
  var svg = document.getElementById('plot');
  var zoomText = document.getElementById('zoomtext');
  var S = D.steps.length, P = D.procs.length;
  var GAP = 2, MINCOL = 12, PAD = 14, BAR = D.row - 9, STRIP = D.row >= 22 ? 4 : 3;
  var INSET = BAR >= 12 ? 2 : 1;
  var height = D.top + D.row * P + 4;
  var maxSlowest = Math.max.apply(null, D.slowest);
  var kLow = MINCOL * 1e6 / maxSlowest, kHigh = 4000 * 1e6 / maxSlowest;
  var measure = document.createElement('canvas').getContext('2d');
  measure.font = '11px system-ui, sans-serif';
  var labelW = D.steps.map(function (s) { return measure.measureText(String(s)).width; });
  var k = 0, kFit = 0, fitted = true, x = [], w = [];

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var a in attrs) e.setAttribute(a, attrs[a]);
    parent.appendChild(e);
    return e;
  }
  function tip(e, text) { el('title', {}, e).textContent = text; }
  function ms(ns) { return (ns / 1e6).toFixed(3) + ' ms'; }
  function pct(f) { return (100 * f).toFixed(1) + '%'; }
  function n2(v) { return v.toFixed(2); }
  function widths(kk) { return D.slowest.map(function (s) { return Math.max(MINCOL, kk * s / 1e6); }); }
  function total(kk) {
    var t = 2 * PAD;
    widths(kk).forEach(function (c) { t += c + GAP; });
    return t - GAP;
  }
  function fit() {
    var room = scroller.clientWidth;
    if (total(kLow) >= room) return kLow;
    var lo = kLow, hi = kLow;
    while (total(hi) < room && hi < kHigh) hi *= 2;
    for (var i = 0; i < 40; i++) {
      var m = (lo + hi) / 2;
      if (total(m) <= room) lo = m; else hi = m;
    }
    return lo;
  }
  // The smallest k of 1, 2, 5, 10, 20, 25, 50, ... for which the headers of steps numbered
  // k, 2k, ... leave a gap between each other.
  function every() {
    var steps = [1, 2, 5, 10, 20, 25, 50];
    for (var scale = 100; scale <= 1e9; scale *= 10) steps.push(scale, 2 * scale, 5 * scale);
    for (var j = 0; j < steps.length; j++) {
      var prev = -Infinity, ok = true;
      for (var i = 0; i < S && ok; i++) {
        if (D.steps[i] % steps[j] !== 0) continue;
        var mid = x[i] + w[i] / 2;
        if (mid - labelW[i] / 2 < prev + 8) ok = false; else prev = mid + labelW[i] / 2;
      }
      if (ok) return steps[j];
    }
    return Infinity;
  }

  function draw() {
    var began = performance.now();
    w = widths(k); x = [];
    var at = PAD;
    for (var i = 0; i < S; i++) { x.push(at); at += w[i] + GAP; }
    var width = Math.ceil(at - GAP + PAD);
    svg.textContent = '';
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    var g = document.createElementNS(NS, 'g');
    var k2 = every();
    for (i = 0; i < S; i++) {
      el('rect', {'class': i % 2 ? 'col odd' : 'col', x: n2(x[i] - GAP / 2), y: D.head,
                  width: n2(w[i] + GAP), height: height - D.head}, g);
      if (D.steps[i] % k2 === 0) {
        el('text', {'class': 'stephead', x: n2(x[i] + w[i] / 2), y: D.head - 6}, g).textContent =
            D.steps[i];
      }
      var m = D.gpu[i];
      if (D.band && m) {
        var by = D.head + 4, bh = D.band, band = el('g', {'class': 'band'}, g);
        el('rect', {'class': 'idle', x: n2(x[i]), y: by, width: n2(w[i]), height: bh}, band);
        el('rect', {'class': 'busy', x: n2(x[i]), y: n2(by + bh * (1 - m[0])), width: n2(w[i]),
                    height: n2(bh * m[0])}, band);
        if (m[1] !== null) {
          el('rect', {'class': 'comm', x: n2(x[i]), y: n2(by + bh * (1 - m[1])), width: n2(w[i]),
                      height: n2(bh * m[1])}, band);
        }
        tip(band, 'step ' + D.steps[i] + ', median across processes: GPU busy ' + pct(m[0]) +
            ', idle ' + pct(1 - m[0]) + (m[1] !== null ? ', communication ' + pct(m[1]) : '') +
            ' of the step');
      }
    }
    D.procs.forEach(function (p, pi) {
      var y = D.top + D.row * pi + 2;
      p.cells.forEach(function (c) {
        var i = c[0], d = c[1], busy = c[2], comm = c[3], wait = c[4], sh = c[6];
        var bw = w[i] * d / D.slowest[i];
        var cell = el('g', {'class': c[5] ? 'cell straggler' : 'cell'}, g);
        el('rect', {'class': 'stepbar', 'data-worker': p.label, 'data-step': D.steps[i],
                    x: n2(x[i]), y: y, width: n2(bw), height: BAR}, cell);
        // One tooltip for the whole cell (its bar, ranges and strip): fewer nodes, faster zoom.
        var text = p.label + ', step ' + D.steps[i] + ': ' + ms(d) + ' (median ' + ms(D.median[i]) + ')';
        if (c[5]) text += ', straggler';
        if (busy !== null) text += '\nGPU busy ' + ms(busy) + ' (' + pct(busy / d) + '), idle ' + ms(d - busy);
        if (comm !== null) text += '\ncommunication ' + ms(comm) + ' (' + pct(comm / d) + ')';
        if (wait !== null) text += ', of it waiting ' + ms(wait);
        var sx = x[i];
        for (var j = 0; j + 1 < sh.length; j += 2) {
          var rw = bw * sh[j + 1] / d;
          el('rect', {'class': 'share', x: n2(sx), y: y + INSET, width: n2(rw), height: BAR - 2 * INSET,
                      fill: D.colours[sh[j]]}, cell);
          text += '\n' + D.names[sh[j]] + ': ' + ms(sh[j + 1]) + ' (' + pct(sh[j + 1] / d) + ')';
          sx += rw;
        }
        tip(cell, text);
        if (busy !== null) {
          var sy = y + BAR + 1;
          el('rect', {'class': 'idle', x: n2(x[i]), y: sy, width: n2(bw), height: STRIP}, cell);
          el('rect', {'class': 'busy', 'data-worker': p.label, 'data-step': D.steps[i], x: n2(x[i]),
                      y: sy, width: n2(bw * busy / d), height: STRIP}, cell);
          if (comm !== null && comm > 0) {
            el('rect', {'class': 'comm', 'data-worker': p.label, 'data-step': D.steps[i],
                        x: n2(x[i] + bw * (busy - comm) / d), y: sy,
                        width: n2(bw * comm / d), height: STRIP}, cell);
          }
        }
      });
    });
    svg.appendChild(g);
    zoomText.textContent = 'zoom ' + (k / kFit).toFixed(1) + 'x of fit';
    mark();
    // How long one drawing took, layout included: zooming redraws, so it must stay short.
    document.body.setAttribute('data-draw-ms', (performance.now() - began).toFixed(0));
  }

  function mark() {
    var bars = svg.querySelectorAll('rect.stepbar'), strips = svg.querySelectorAll('rect.busy[data-step]');
    var heads = svg.querySelectorAll('text.stephead');
    var size = function (e) { var b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; };
    var drawnBars = Array.prototype.filter.call(bars, size);
    var drawnStrips = Array.prototype.filter.call(strips, size);
    var comms = Array.prototype.filter.call(svg.querySelectorAll('rect.comm[data-step]'), size);
    var boxes = Array.prototype.map.call(heads, function (t) {
      var b = t.getBoundingClientRect();
      return b.left.toFixed(1) + ' ' + b.right.toFixed(1);
    });
    drawnBars.forEach(function (r) { r.setAttribute('data-drawn', 'yes'); });
    drawnStrips.forEach(function (r) { r.setAttribute('data-drawn', 'yes'); });
    comms.forEach(function (r) { r.setAttribute('data-drawn', 'yes'); });
    heads.forEach(function (t, i) { t.setAttribute('data-box', boxes[i]); });
    document.body.setAttribute('data-drawn-bars', String(drawnBars.length));
    document.body.setAttribute('data-drawn-strips', String(drawnStrips.length));
    scroller.setAttribute('data-widths', scroller.scrollWidth + ' ' + scroller.clientWidth);
    document.querySelectorAll('#timeline .wl[title]').forEach(function (l) {
      var a = l.querySelector('.wa');
      l.setAttribute('data-cut', a && a.scrollWidth > a.clientWidth ? 'yes' : 'no');
    });
    document.body.setAttribute('data-page', document.documentElement.scrollWidth + ' ' + window.innerWidth);
  }

  var pending = null;
  function zoom(factor, clientX) {
    var box = scroller.getBoundingClientRect();
    var view = clientX === undefined ? box.width / 2 : clientX - box.left;
    var px = scroller.scrollLeft + view, i = 0;
    while (i + 1 < S && x[i + 1] <= px) i++;
    var part = (px - x[i]) / (w[i] + GAP);
    k = Math.min(kHigh, Math.max(kFit, k * factor));
    fitted = false;
    draw();
    scroller.scrollLeft = x[i] + part * (w[i] + GAP) - view;
  }
  document.querySelectorAll('#timeline button').forEach(function (b) {
    b.addEventListener('click', function () {
      var how = b.getAttribute('data-zoom');
      if (how === 'fit') { kFit = fit(); k = kFit; fitted = true; draw(); scroller.scrollLeft = 0; }
      else zoom(how === 'in' ? 1.5 : 1 / 1.5);
    });
  });
  scroller.addEventListener('wheel', function (e) {
    if (!e.ctrlKey) return;
    e.preventDefault();
    var factor = Math.exp(-e.deltaY * 0.002), at = e.clientX;
    if (pending) { pending.factor *= factor; pending.at = at; return; }
    pending = {factor: factor, at: at};
    requestAnimationFrame(function () { var z = pending; pending = null; zoom(z.factor, z.at); });
  }, {passive: false});
  window.addEventListener('resize', function () {
    kFit = fit();
    if (fitted) { k = kFit; draw(); }
  });
  kFit = fit();
  k = kFit;
  var asked = /zoom=([0-9.]+)/.exec(location.hash);
  if (asked) { k = Math.min(kHigh, Math.max(kFit, kFit * parseFloat(asked[1]))); fitted = false; }
  draw();
})();
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
    const RangeNames names = range_names(set);
    const std::vector<GpuMedians> medians = gpu_medians(set);
    timeline(out, set, names, medians);
    legend(out, names);
    gpu_table(out, set, medians);

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
    out << "<h3>Step time by worker</h3>\n<div class=wide>";
    table(out, header, rows);
    out << "</div>\n";
    out << "<h3>Stragglers (more than " << fixed(set.comparison.straggler_percent, 1)
        << "% above the step's median)</h3>\n";
    if (stragglers.empty()) {
      out << "<p class=note>None.</p>\n";
    } else {
      table(out, {"step", "worker", "time (ms)", "median (ms)", "% above"}, stragglers, 2);
    }
  }

  // One section per process, folded, so that 16 of them do not bury the timeline.
  if (!set.processes.empty()) out << "<h2>Processes</h2>\n";
  for (const ProcessSummary& p : set.processes) {
    const ReportIdentity& id = p.identity;
    out << "<details class=proc><summary>" << escape(id.label())
        << "</summary>\n<p class=note>worker " << escape(id.worker) << ", rank "
        << (id.rank ? std::to_string(*id.rank) : "-") << ", node "
        << escape(id.node.empty() ? "-" : id.node) << ", pid "
        << (id.pid ? std::to_string(id.pid) : "-") << ", window "
        << (id.window ? id.window->text() : "-") << "<br>" << escape(p.report.string()) << "</p>\n";
    if (!p.steps.empty()) {
      bool communication = false;
      for (const StepSummary& s : p.steps) {
        communication = communication || s.communication_ns.value_or(0) > 0;
      }
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
        if (communication) row.push_back(s.communication_ns ? ms(*s.communication_ns) : "-");
        row.push_back(shares.empty() ? "-" : shares);
        rows.push_back(row);
      }
      std::vector<std::string> header = {"step", "duration (ms)"};
      if (p.has_gpu) {
        header.push_back("GPU busy (ms)");
        header.push_back("GPU idle (ms)");
      }
      if (communication) header.push_back("communication (ms)");
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
      kernel_table(out, p.kernels);
    }
    out << "<h3>OS runtime</h3>\n";
    if (p.osrt.empty()) {
      out << "<p class=note>No OS runtime data.</p>\n";
    } else {
      summary_table(out, p.osrt, "Num Calls", "Name");
    }
    out << "</details>\n";
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
