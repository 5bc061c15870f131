// One self-contained HTML page (no network): its style sheet, its script and the timeline's frame
// are the files of src/render/page, embedded at build time; the page's data fills them. The
// timeline gives every step a column as wide as its slowest worker, so step boundaries line up
// across workers; each worker's bar is split into its top-level ranges.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "nsel/analyze/comparison.hpp"
#include "nsel/analyze/range_names.hpp"
#include "nsel/render/report.hpp"
#include "nsel/sys/files.hpp"
#include "render/html_page.hpp"
#include "render/number_text.hpp"
#include "render/page/assets.hpp"
#include "render/run_header.hpp"
#include "render/straggler_text.hpp"

namespace nsel {
namespace {

using html_page::escape;
using html_page::table;
using render_detail::fixed;
using render_detail::ms;

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
  // A range named after its step ("data copy in 5" in step 5) under the name of all of them
  // ("data copy in {n}"), so the legend holds one entry for it, not one per step: the one rule of
  // analyze/range_names.hpp.
  StepNameGroups groups;
  std::string colour(std::size_t i) const { return i < kColoured ? kPalette[i] : kOtherColour; }
  std::string name_of(const std::string& range, long long step) const {
    return groups.shown_name(range, step);
  }
  std::size_t of(const std::string& range, long long step) const {
    return index.at(name_of(range, step));
  }
};

RangeNames range_names(const ReportSet& set) {
  RangeNames out;
  for (const ProcessSummary& p : set.processes) {
    for (const StepSummary& s : p.steps) {
      for (const RangeShare& r : s.shares) out.groups.add(r.range, s.step);
    }
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

double rounded(double value) {
  return std::round(value * 1e4) / 1e4;
}

// Per step, the median across processes of the GPU's busy time and of its communication time,
// each as a fraction of the process's own step (StepAcrossWorkers' medians).
struct GpuMedians {
  std::optional<double> busy;
  std::optional<double> communication;
  std::optional<double> wait_ns;
};

std::vector<GpuMedians> gpu_medians(const ReportSet& set) {
  std::vector<GpuMedians> out;
  for (const StepAcrossWorkers& s : set.comparison.steps) {
    out.push_back(
        {s.median_gpu_busy_share, s.median_communication_share, s.median_communication_wait_ns});
  }
  return out;
}

nlohmann::json optional_number(const std::optional<long long>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// The label (process_name) split so that its end (the rank and PID) is never cut off: only the
// worker's name shrinks to an ellipsis when the label column is too narrow.
void worker_label(std::ostringstream& out, const std::string& label, int row) {
  std::size_t cut = label.rfind(" rank ");
  if (cut == std::string::npos) cut = label.rfind(" (pid ");
  if (cut == std::string::npos) cut = label.size() > 8 ? label.size() - 8 : label.size();
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

// The timeline's heights in px: a row per process, the step numbers' head and, with GPU data,
// the band of per-step medians above the rows (top: where the rows begin).
struct TimelineLayout {
  bool any_gpu = false;
  int row = 0;
  int head = 20;
  int band = 0;
  int top = 0;
};

TimelineLayout timeline_layout(const ReportSet& set) {
  TimelineLayout layout;
  for (const ProcessSummary& p : set.processes) layout.any_gpu = layout.any_gpu || p.has_gpu;
  // Rows shrink with more processes, down to a height that still holds a label.
  const std::size_t processes = set.processes.size();
  layout.row = processes <= 16 ? 26 : std::max(18, static_cast<int>(416 / processes));
  layout.band = layout.any_gpu ? 36 : 0;
  layout.top = layout.head + (layout.band > 0 ? layout.band + 10 : 2);
  return layout;
}

// Per step, what the script needs of the step across workers: its number, its slowest worker's
// time (the column's width), its median and the GPU medians of its band.
void step_columns(nlohmann::json& data, const StepComparison& c,
                  const std::vector<GpuMedians>& medians) {
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
}

// A step's top-level ranges side by side in the order they began in the step: name index, ns.
nlohmann::json range_shares(const StepSummary& step, const RangeNames& names) {
  std::vector<const RangeShare*> order;
  for (const RangeShare& r : step.shares) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const RangeShare* a, const RangeShare* b) {
    return a->first_start_ns < b->first_start_ns;
  });
  nlohmann::json shares = nlohmann::json::array();
  for (const RangeShare* r : order) {
    shares.push_back(names.of(r->range, step.step));
    shares.push_back(r->ns);
  }
  return shares;
}

// Process p's cells, one per step it ran: [step index, duration, GPU busy, communication,
// communication wait, straggler (1 or 0), range shares].
nlohmann::json worker_cells(const ReportSet& set, std::size_t p, const RangeNames& names) {
  const StepComparison& c = set.comparison;
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
      shares = range_shares(step, names);
    }
    cells.push_back({i, *s.duration_ns[p], busy, communication, wait, straggler ? 1 : 0, shares});
  }
  return cells;
}

// Everything report.js draws from, as JSON.
nlohmann::json timeline_data(const ReportSet& set, const RangeNames& names,
                             const std::vector<GpuMedians>& medians, const TimelineLayout& layout) {
  nlohmann::json data;
  data["row"] = layout.row;
  data["head"] = layout.head;
  data["band"] = layout.band;
  data["top"] = layout.top;
  data["names"] = names.names;
  nlohmann::json colours = nlohmann::json::array();
  for (std::size_t i = 0; i < names.names.size(); ++i) colours.push_back(names.colour(i));
  data["colours"] = colours;
  step_columns(data, set.comparison, medians);
  nlohmann::json procs = nlohmann::json::array();
  for (std::size_t p = 0; p < set.processes.size(); ++p) {
    procs.push_back({{"label", render_detail::process_name(set.processes[p].identity)},
                     {"cells", worker_cells(set, p, names)}});
  }
  data["procs"] = procs;
  return data;
}

// The data as the content of a script element: '<' written as its JSON escape, so no name can
// end the element early.
std::string script_safe(const nlohmann::json& data) {
  const std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(json.size());
  for (char ch : json) {
    if (ch == '<') {
      safe += "\\u003c";
    } else {
      safe += ch;
    }
  }
  return safe;
}

// The label of the GPU band in the label column, as tall as the band; none without GPU data.
std::string band_label(int band) {
  if (band == 0) return "";
  const std::string height = std::to_string(band) + "px";
  return "<div class='wl bandlabel' style='height:" + height + ";line-height:" + height +
         "' title='per step, the median across processes of the GPU busy share (dark) and of the "
         "communication share (magenta) of the step'>GPU per step (median)</div>";
}

// The note's key to the GPU strip under each bar, its communication part only where some process
// communicated; none without GPU data.
std::string strip_note(const ReportSet& set, const TimelineLayout& layout) {
  if (!layout.any_gpu) return "";
  bool communicated = false;
  for (const ProcessSummary& p : set.processes) {
    for (const StepSummary& s : p.steps) {
      communicated = communicated || s.communication_ns.value_or(0) > 0;
    }
  }
  return std::string(
             "<br>strip under the bar: GPU <i class=sw style='background:#455a64'></i>busy ") +
         (communicated ? "<i class=sw style='background:#d81b60'></i>of it communication " : "") +
         "<i class=sw style='background:#e3e6ea'></i>idle";
}

// The timeline (src/render/page/timeline.html): the worker labels drawn here, the bars by
// report.js from the page data.
void timeline(std::ostringstream& out, const ReportSet& set, const RangeNames& names,
              const std::vector<GpuMedians>& medians) {
  const TimelineLayout layout = timeline_layout(set);
  std::ostringstream labels;
  for (const ProcessSummary& p : set.processes)
    worker_label(labels, render_detail::process_name(p.identity), layout.row);
  out << html_page::fill(page_assets::timeline_html,
                         {{"top", std::to_string(layout.top)},
                          {"head", std::to_string(layout.head)},
                          {"band_label", band_label(layout.band)},
                          {"worker_labels", labels.str()},
                          {"strip_note", strip_note(set, layout)},
                          {"data", script_safe(timeline_data(set, names, medians, layout))}});
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

// The step time of every worker in every step, and the stragglers among them.
void step_time_tables(std::ostringstream& out, const ReportSet& set) {
  std::vector<std::string> header = {"step"};
  for (const ProcessSummary& p : set.processes) {
    header.push_back(render_detail::process_name(p.identity) + " (ms)");
  }
  header.push_back("median (ms)");
  header.push_back("slowest");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<std::string>> stragglers;
  const StepComparison& c = set.comparison;
  for (const StepAcrossWorkers& s : c.steps) {
    std::vector<std::string> row = {std::to_string(s.step)};
    for (const auto& d : s.duration_ns) row.push_back(d ? ms(*d) : "-");
    row.push_back(fixed(s.median_ns / 1e6, 3));
    row.push_back(render_detail::process_name(set.processes[s.slowest].identity));
    rows.push_back(row);
    for (std::size_t p : s.stragglers) {
      stragglers.push_back({std::to_string(s.step),
                            render_detail::process_name(set.processes[p].identity),
                            ms(*s.work_ns[p]), fixed(s.others_median_ns[p].value_or(0) / 1e6, 3),
                            fixed(*s.percent_above_others[p], 1)});
    }
  }
  out << "<h3>Step time by worker</h3>\n<div class=wide>";
  table(out, header, rows);
  out << "</div>\n";
  out << "<h3>" << escape(render_detail::stragglers_heading(c)) << "</h3>\n";
  out << "<p class=note>Straggler: "
      << escape(c.straggler
                    ? render_detail::process_name(set.processes[c.straggler->process].identity) +
                          render_detail::straggler_finding(c, *c.straggler)
                    : render_detail::no_straggler_text(c))
      << "</p>\n";
  if (!stragglers.empty()) {
    table(out, {"step", "worker", "time (ms)", "others' median (ms)", "above the others (%)"},
          stragglers, 2);
  }
}

// The steps of all workers: the timeline with its legend, the GPU medians and the step times.
void steps_section(std::ostringstream& out, const ReportSet& set) {
  out << "<h2>Steps per worker</h2>\n";
  if (set.comparison.steps.empty()) {
    out << "<p class=note>No step ranges found.</p>\n";
    return;
  }
  const RangeNames names = range_names(set);
  const std::vector<GpuMedians> medians = gpu_medians(set);
  timeline(out, set, names, medians);
  legend(out, names);
  gpu_table(out, set, medians);
  step_time_tables(out, set);
}

// One process's steps: duration, GPU busy and idle (with GPU data), communication (where it
// communicated) and the share of each top-level range.
void process_steps_table(std::ostringstream& out, const ProcessSummary& p) {
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
                " %";
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
  if (const auto hint = steps_without_ranges(p)) {
    out << "<p class=note>" << escape(*hint) << "</p>\n";
  }
}

// One process, folded, so that 16 of them do not bury the timeline: who it is, its steps and
// its NVTX, CUDA kernel and OS runtime summaries.
void process_section(std::ostringstream& out, const ProcessSummary& p) {
  const ReportIdentity& id = p.identity;
  out << "<details class=proc><summary>" << escape(id.label())
      << "</summary>\n<p class=note>worker " << escape(id.worker) << ", rank "
      << (id.rank ? std::to_string(*id.rank) : "-") << ", node "
      << escape(id.node.empty() ? "-" : id.node) << ", pid "
      << (id.pid ? std::to_string(id.pid) : "-") << ", window "
      << (id.window ? id.window->text() : "-") << "<br>" << escape(p.report.string()) << "</p>\n";
  for (const std::string& note : p.notes) out << "<p class=note>" << escape(note) << "</p>\n";
  if (!p.steps.empty()) process_steps_table(out, p);
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

}  // namespace

std::string render_html(const ReportSet& set) {
  std::ostringstream body;
  body << "<h1>nsel report</h1><p class=run>" << escape(render_detail::run_header_text(set.run))
       << "</p><p class=note>" << set.processes.size()
       << (set.processes.size() == 1 ? " process" : " processes") << ", "
       << set.comparison.steps.size() << " steps.</p>\n";
  steps_section(body, set);
  if (!set.processes.empty()) body << "<h2>Processes</h2>\n";
  for (const ProcessSummary& p : set.processes) process_section(body, p);
  if (!set.failures.empty()) {
    body << "<h2>Not readable</h2>\n<ul>";
    for (const ReportFailure& f : set.failures) body << "<li class=bad>" << escape(f.message);
    body << "</ul>\n";
  }
  return html_page::page("nsel report", "", body.str(), page_assets::report_js);
}

void write_report_html(const ReportSet& set, const std::filesystem::path& file) {
  write_file_atomically(file, render_html(set));
}

}  // namespace nsel
