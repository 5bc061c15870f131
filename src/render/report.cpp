// Terminal tables, JSON and CSV for `nsel report`. Durations: ns in JSON and CSV (as nsys
// stats), ms in the step tables of the terminal, ns in its summary tables (comparable with
// `nsys stats` output).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "nsel/analyze/range_names.hpp"
#include "nsel/core/error.hpp"
#include "nsel/render/report.hpp"
#include "nsel/sys/files.hpp"
#include "render/number_text.hpp"
#include "render/plain_tables.hpp"
#include "render/run_header.hpp"
#include "render/straggler_text.hpp"
#include "render/terminal_cells.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

using render_detail::fixed;
using render_detail::ms;
using render_detail::ms_text;
using render_detail::percent_text;

std::string percent(long long part, long long whole) {
  return whole == 0 ? "-"
                    : fixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1);
}

using render_detail::TextTable;

// nsys stats's columns, in milliseconds: one readable unit beside the step tables (JSON and CSV
// keep nsys's nanoseconds).
std::vector<std::string> summary_header(const std::string& count, const std::string& name) {
  return {"Time (%)", "Total (ms)", count,         "Avg (ms)", "Med (ms)",
          "Min (ms)", "Max (ms)",   "StdDev (ms)", name};
}

// Rows of every summary table (SummaryRow, KernelRow) share these columns. A group of names
// (nsel/analyze/range_names.hpp) has no median: "-".
template <typename Row>
std::vector<std::string> summary_cells(const Row& r, bool has_median = true) {
  const DurationStats& s = r.stats;
  return {fixed(r.time_percent, 1),
          ms(s.total),
          std::to_string(s.count),
          ms_text(s.mean),
          has_median ? ms_text(s.median) : "-",
          ms(s.min),
          ms(s.max),
          ms_text(s.stddev),
          r.name};
}

// The NVTX table with the names that carry a step's number grouped ("step {n}", 8 names).
void add_grouped_rows(TextTable& table, const ProcessSummary& p) {
  for (const GroupedRow& g : group_rows_by_step(p.nvtx, p.steps)) {
    std::vector<std::string> cells = summary_cells(g.row, g.has_median);
    if (g.names > 1) cells.back() += " (" + std::to_string(g.names) + " names)";
    table.add(cells);
  }
}

// The kernel table: nsys's columns (GridXYZ and BlockXYZ before the name), the name marked
// with "*" when it is a communication kernel.
std::vector<std::string> kernel_header() {
  std::vector<std::string> header = summary_header("Instances", "GridXYZ");
  header.push_back("BlockXYZ");
  header.push_back("Kernel");
  return header;
}
std::vector<std::string> kernel_cells(const KernelRow& r) {
  std::vector<std::string> cells = summary_cells(r);
  cells.back() = r.grid;
  cells.push_back(r.block);
  cells.push_back((r.communication ? "* " : "") + r.name);
  return cells;
}

std::string optional_text(const std::optional<long long>& v) {
  return v ? std::to_string(*v) : "-";
}

std::string window_text(const ReportIdentity& id) {
  return id.window ? id.window->text() : "-";
}

std::string shares_text(const StepSummary& s) {
  std::string out;
  for (const RangeShare& share : s.shares) {
    if (!out.empty()) out += ", ";
    out += share.range + " " + percent(share.ns, s.duration_ns()) + " %";
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string render_text(const ReportSet& set) {
  std::ostringstream out;
  out << "nsel report: " << set.processes.size()
      << (set.processes.size() == 1 ? " process" : " processes");
  if (!set.failures.empty()) out << ", " << set.failures.size() << " not readable";
  out << "\n" << render_detail::run_header_text(set.run) << "\n";
  for (const ProcessSummary& p : set.processes) {
    const ReportIdentity& id = p.identity;
    out << "\n" << render_detail::shown(id.label()) << "\n";
    out << "  worker " << render_detail::shown(id.worker) << "  rank " << optional_text(id.rank)
        << "  node " << (id.node.empty() ? "-" : render_detail::shown(id.node)) << "  pid "
        << (id.pid ? std::to_string(id.pid) : "-") << "  window " << window_text(id) << "\n";
    out << "  report " << render_detail::shown(p.report.string()) << "\n";
    for (const std::string& note : p.notes) out << "  Note: " << render_detail::shown(note) << "\n";
    if (p.steps.empty()) {
      out << "  steps: none found\n";
    } else {
      std::vector<std::string> header = {"step", "duration (ms)"};
      if (p.has_gpu) {
        header.push_back("GPU busy (ms)");
        header.push_back("GPU idle (ms)");
        header.push_back("communication (ms)");
        header.push_back("compute (ms)");
      }
      header.push_back("top-level ranges (share of the step)");
      TextTable steps(header);
      for (const StepSummary& s : p.steps) {
        // A cut step's length is not the step's: marked, and left out of the comparison.
        std::vector<std::string> row = {std::to_string(s.step),
                                        ms(s.duration_ns()) + (s.cut ? " (cut)" : "")};
        if (p.has_gpu) {
          const long long busy = s.gpu_busy_ns.value_or(0);
          row.push_back(ms(busy));
          row.push_back(ms(s.duration_ns() - busy));
          row.push_back(ms(s.communication_ns.value_or(0)));
          row.push_back(ms(s.compute_ns.value_or(0)));
        }
        row.push_back(shares_text(s));
        steps.add(row);
      }
      out << "  Steps\n" << steps.render("    ");
      if (const auto hint = steps_without_ranges(p)) out << "  Note: " << *hint << "\n";
    }
    if (!p.has_nvtx) {
      out << "  NVTX ranges: no NVTX data\n";
    } else if (!p.nvtx.empty()) {
      TextTable nvtx(summary_header("Instances", "Range"));
      add_grouped_rows(nvtx, p);
      out << "  NVTX ranges (the columns of nsys stats -r nvtxppsum, in ms; names that carry "
             "a step's number as one row, each in --json and --csv)\n"
          << nvtx.render("    ");
    }
    if (!p.has_gpu) {
      out << "  CUDA kernels: no GPU data\n";
    } else {
      TextTable kernels(kernel_header());
      for (const KernelRow& r : p.kernels) kernels.add(kernel_cells(r));
      out << "  CUDA kernels (top " << p.kernels.size() << " of " << p.kernel_names
          << " rows by total time; one row per name, grid and block, as nsys stats -r "
             "gpukernsum, in ms; * communication)\n"
          << kernels.render("    ");
    }
    if (!p.has_osrt) {
      out << "  OS runtime: no OS runtime data\n";
    } else if (!p.osrt.empty()) {
      TextTable osrt(summary_header("Num Calls", "Name"));
      for (const SummaryRow& r : p.osrt) osrt.add(summary_cells(r));
      out << "  OS runtime (the columns of nsys stats -r osrtsum, in ms)\n" << osrt.render("    ");
    }
  }

  const StepComparison& c = set.comparison;
  if (!c.steps.empty()) {
    std::vector<std::string> header = {"step"};
    for (const ProcessSummary& p : set.processes) header.push_back(p.identity.label());
    header.push_back("median");
    header.push_back("slowest");
    TextTable table(header);
    for (const StepAcrossWorkers& s : c.steps) {
      std::vector<std::string> row = {std::to_string(s.step)};
      for (const auto& d : s.duration_ns) row.push_back(d ? ms(*d) : "-");
      row.push_back(fixed(s.median_ns / 1e6, 3));
      row.push_back(set.processes[s.slowest].identity.label());
      table.add(row);
    }
    out << "\nStep time by worker (ms)\n" << table.render("  ");
    out << "\n" << render_detail::stragglers_heading(c) << "\n";
    bool any = false;
    for (const StepAcrossWorkers& s : c.steps) {
      for (std::size_t p : s.stragglers) {
        any = true;
        out << "  step " << s.step << ": "
            << render_detail::shown(render_detail::process_name(set.processes[p].identity)) << " "
            << ms(*s.work_ns[p]) << " ms, " << percent_text(*s.percent_above_others[p])
            << " above the others' median " << ms_text(s.others_median_ns[p].value_or(0))
            << " ms\n";
      }
    }
    if (!any) out << "  none\n";
    if (c.straggler) {
      out << "  Straggler: "
          << render_detail::shown(
                 render_detail::process_name(set.processes[c.straggler->process].identity))
          << render_detail::straggler_finding(c, *c.straggler) << "\n";
    }
    bool waits = false;
    for (const StepAcrossWorkers& s : c.steps) {
      for (const auto& w : s.communication_wait_ns) waits |= w.has_value();
    }
    if (waits && set.processes.size() > 1) {
      std::vector<std::string> wait_header = {"step"};
      for (const ProcessSummary& p : set.processes) wait_header.push_back(p.identity.label());
      wait_header.push_back("waited most");
      TextTable wait(wait_header);
      for (const StepAcrossWorkers& s : c.steps) {
        std::vector<std::string> row = {std::to_string(s.step)};
        std::optional<std::size_t> most;
        for (std::size_t p = 0; p < set.processes.size(); ++p) {
          const auto& w = p < s.communication_wait_ns.size() ? s.communication_wait_ns[p]
                                                             : std::optional<long long>();
          row.push_back(w ? ms(*w) : "-");
          if (w && (!most || *w > *s.communication_wait_ns[*most])) most = p;
        }
        row.push_back(most ? set.processes[*most].identity.label() : "-");
        wait.add(row);
      }
      out << "\nCommunication wait by worker (ms; communication kernel time above the step's "
             "least)\n"
          << wait.render("  ");
    }
  }
  if (!set.failures.empty()) {
    out << "\nNot readable\n";
    for (const ReportFailure& f : set.failures)
      out << "  " << render_detail::shown(f.message) << "\n";
  }
  return out.str();
}

namespace {

template <typename Row>
nlohmann::json row_json(const Row& r) {
  const DurationStats& s = r.stats;
  return {{"name", r.name},
          {"time_percent", r.time_percent},
          {"total_ns", s.total},
          {"instances", s.count},
          {"avg_ns", round_like_sqlite(s.mean, 1)},
          {"median_ns", round_like_sqlite(s.median, 1)},
          {"min_ns", s.min},
          {"max_ns", s.max},
          {"stddev_ns", round_like_sqlite(s.stddev, 1)}};
}

template <typename Row>
nlohmann::json rows_json(const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) out.push_back(row_json(r));
  return out;
}

nlohmann::json rows_json(const std::vector<KernelRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const KernelRow& r : rows) {
    nlohmann::json row = row_json(r);
    row["grid"] = r.grid;
    row["block"] = r.block;
    row["communication"] = r.communication;
    out.push_back(std::move(row));
  }
  return out;
}

template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json render_json(const ReportSet& set) {
  nlohmann::json processes = nlohmann::json::array();
  for (const ProcessSummary& p : set.processes) {
    const ReportIdentity& id = p.identity;
    nlohmann::json steps = nlohmann::json::array();
    for (const StepSummary& s : p.steps) {
      nlohmann::json shares = nlohmann::json::array();
      for (const RangeShare& r : s.shares) shares.push_back({{"range", r.range}, {"ns", r.ns}});
      steps.push_back({{"step", s.step},
                       {"start_ns", s.start_ns},
                       {"end_ns", s.end_ns},
                       {"duration_ns", s.duration_ns()},
                       {"gpu_busy_ns", or_null(s.gpu_busy_ns)},
                       {"gpu_idle_ns", or_null(s.gpu_idle_ns())},
                       {"communication_ns", or_null(s.communication_ns)},
                       {"compute_ns", or_null(s.compute_ns)},
                       {"cut", s.cut},
                       {"top_level_ranges", shares}});
    }
    processes.push_back(
        {{"label", id.label()},
         {"name", render_detail::process_name(id)},
         {"worker", id.worker},
         {"rank", or_null(id.rank)},
         {"node", id.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(id.node)},
         {"pid", id.pid ? nlohmann::json(id.pid) : nlohmann::json(nullptr)},
         {"step_range", id.window ? nlohmann::json(id.window->text()) : nlohmann::json(nullptr)},
         {"report", p.report.string()},
         {"export", p.export_file.string()},
         {"has_nvtx", p.has_nvtx},
         {"has_gpu", p.has_gpu},
         {"has_osrt", p.has_osrt},
         {"steps", steps},
         {"nvtx", rows_json(p.nvtx)},
         {"kernels", rows_json(p.kernels)},
         {"kernel_names", p.kernel_names},
         {"osrt", rows_json(p.osrt)},
         {"steps_without_ranges", or_null(steps_without_ranges(p))},
         {"notes", p.notes}});
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const StepAcrossWorkers& s : set.comparison.steps) {
    nlohmann::json durations = nlohmann::json::object();
    for (std::size_t p = 0; p < s.duration_ns.size(); ++p) {
      durations[set.processes[p].identity.label()] = or_null(s.duration_ns[p]);
    }
    nlohmann::json stragglers = nlohmann::json::array();
    for (std::size_t p : s.stragglers) stragglers.push_back(set.processes[p].identity.label());
    nlohmann::json above = nlohmann::json::object();
    for (std::size_t p = 0; p < s.percent_above_others.size(); ++p) {
      const auto& percent = s.percent_above_others[p];
      above[set.processes[p].identity.label()] =
          percent ? nlohmann::json(round_like_sqlite(*percent, 1)) : nlohmann::json(nullptr);
    }
    nlohmann::json waits = nlohmann::json::object();
    for (std::size_t p = 0; p < s.communication_wait_ns.size(); ++p) {
      waits[set.processes[p].identity.label()] = or_null(s.communication_wait_ns[p]);
    }
    nlohmann::json work = nlohmann::json::object();
    for (std::size_t p = 0; p < s.work_ns.size(); ++p) {
      work[set.processes[p].identity.label()] = or_null(s.work_ns[p]);
    }
    steps.push_back({{"step", s.step},
                     {"duration_ns", durations},
                     {"work_ns", work},
                     {"communication_wait_ns", waits},
                     {"median_ns", s.median_ns},
                     {"slowest", set.processes[s.slowest].identity.label()},
                     {"stragglers", stragglers},
                     {"percent_above_others", above}});
  }
  nlohmann::json failures = nlohmann::json::array();
  for (const ReportFailure& f : set.failures) {
    failures.push_back({{"report", f.report.string()}, {"error", f.message}});
  }
  return {{"run", render_detail::run_json(set.run)},
          {"processes", processes},
          {"steps", steps},
          {"straggler_percent", set.comparison.straggler_percent},
          {"communication_ranges", set.comparison.communication_ranges},
          {"straggler", render_detail::straggler_json(set)},
          {"failures", failures}};
}

namespace {

using render_detail::Csv;

void kernel_csv(Csv& csv, const ReportSet& set) {
  std::vector<std::string> header = {"process"};
  for (const std::string& h : kernel_header()) header.push_back(h);
  header.push_back("communication");
  csv.row(header);
  for (const ProcessSummary& p : set.processes) {
    for (const KernelRow& r : p.kernels) {
      std::vector<std::string> row = {p.identity.label()};
      for (const std::string& cell : summary_cells(r)) row.push_back(cell);
      row.back() = r.grid;
      row.push_back(r.block);
      row.push_back(r.name);
      row.push_back(r.communication ? "1" : "0");
      csv.row(row);
    }
  }
}

template <typename Row>
void summary_csv(Csv& csv, const ReportSet& set, const std::string& count, const std::string& name,
                 std::vector<Row> ProcessSummary::*rows) {
  std::vector<std::string> header = {"process"};
  for (const std::string& h : summary_header(count, name)) header.push_back(h);
  csv.row(header);
  for (const ProcessSummary& p : set.processes) {
    for (const Row& r : p.*rows) {
      std::vector<std::string> row = {p.identity.label()};
      for (const std::string& cell : summary_cells(r)) row.push_back(cell);
      csv.row(row);
    }
  }
}

}  // namespace

std::vector<fs::path> write_csv(const ReportSet& set, const fs::path& dir) {
  render_detail::CsvFolder folder(dir);
  const auto add = [&folder](const std::string& name) -> Csv& { return folder.add(name); };

  Csv& processes = add("processes.csv");
  processes.row({"process", "worker", "rank", "node", "pid", "step_range", "steps", "has_nvtx",
                 "has_gpu", "has_osrt", "report", "export"});
  for (const ProcessSummary& p : set.processes) {
    const ReportIdentity& id = p.identity;
    processes.row({id.label(), id.worker, optional_text(id.rank), id.node,
                   id.pid ? std::to_string(id.pid) : "", id.window ? id.window->text() : "",
                   std::to_string(p.steps.size()), p.has_nvtx ? "1" : "0", p.has_gpu ? "1" : "0",
                   p.has_osrt ? "1" : "0", p.report.string(), p.export_file.string()});
  }

  Csv& steps = add("steps.csv");
  steps.row({"process", "step", "start_ns", "end_ns", "duration_ns", "gpu_busy_ns", "gpu_idle_ns",
             "communication_ns", "compute_ns"});
  Csv& shares = add("step_ranges.csv");
  shares.row({"process", "step", "range", "ns", "percent_of_step"});
  for (const ProcessSummary& p : set.processes) {
    for (const StepSummary& s : p.steps) {
      steps.row({p.identity.label(), std::to_string(s.step), std::to_string(s.start_ns),
                 std::to_string(s.end_ns), std::to_string(s.duration_ns()),
                 optional_text(s.gpu_busy_ns), optional_text(s.gpu_idle_ns()),
                 optional_text(s.communication_ns), optional_text(s.compute_ns)});
      for (const RangeShare& r : s.shares) {
        shares.row({p.identity.label(), std::to_string(s.step), r.range, std::to_string(r.ns),
                    percent(r.ns, s.duration_ns())});
      }
    }
  }

  Csv& by_worker = add("step_by_worker.csv");
  std::vector<std::string> header = {"step"};
  for (const ProcessSummary& p : set.processes) header.push_back(p.identity.label());
  header.push_back("median_ns");
  header.push_back("slowest");
  by_worker.row(header);
  Csv& stragglers = add("stragglers.csv");
  stragglers.row(
      {"step", "process", "duration_ns", "work_ns", "others_median_ns", "percent_above_others"});
  for (const StepAcrossWorkers& s : set.comparison.steps) {
    std::vector<std::string> row = {std::to_string(s.step)};
    for (const auto& d : s.duration_ns) row.push_back(d ? std::to_string(*d) : "");
    row.push_back(fixed(s.median_ns, 1));
    row.push_back(set.processes[s.slowest].identity.label());
    by_worker.row(row);
    for (std::size_t p : s.stragglers) {
      stragglers.row({std::to_string(s.step), set.processes[p].identity.label(),
                      std::to_string(*s.duration_ns[p]), std::to_string(*s.work_ns[p]),
                      fixed(s.others_median_ns[p].value_or(0), 1),
                      fixed(*s.percent_above_others[p], 1)});
    }
  }

  summary_csv(add("nvtx.csv"), set, "Instances", "Range", &ProcessSummary::nvtx);
  kernel_csv(add("kernels.csv"), set);
  Csv& waits = add("communication_wait.csv");
  waits.row({"step", "process", "communication_wait_ns"});
  for (const StepAcrossWorkers& s : set.comparison.steps) {
    for (std::size_t p = 0; p < s.communication_wait_ns.size(); ++p) {
      if (s.communication_wait_ns[p]) {
        waits.row({std::to_string(s.step), set.processes[p].identity.label(),
                   std::to_string(*s.communication_wait_ns[p])});
      }
    }
  }
  summary_csv(add("osrt.csv"), set, "Num Calls", "Name", &ProcessSummary::osrt);
  Csv& failures = add("failures.csv");
  failures.row({"report", "error"});
  for (const ReportFailure& f : set.failures) failures.row({f.report.string(), f.message});

  return folder.write();
}

}  // namespace nsel
