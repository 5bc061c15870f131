// A process's summary from its export: the NVTX part (nvtx_summary.cpp), CUDA kernels and GPU
// busy time per step, and the OS runtime summary.
#include "nsel/analyze/summary.hpp"

#include <algorithm>
#include <climits>

#include "analyze/duration_stats.hpp"
#include "analyze/nvtx_summary.hpp"
#include "analyze/sqlite_db.hpp"
#include "analyze/summary_tables.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

using analyze::Database;
using analyze::GroupedDurations;
using analyze::Interner;
using analyze::Statement;
using analyze::Strings;
using analyze::summary_rows;

constexpr long long kOsrtApiClass = 27;

// Merged GPU activity (kernels, copies, sets) overlapping each step.
void add_gpu_busy(const Database& db, std::vector<StepSummary>& steps) {
  std::string sql;
  for (const char* table :
       {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
    const auto columns = db.columns(table);
    if (!columns.count("start") || !columns.count("end")) continue;
    if (!sql.empty()) sql += " UNION ALL ";
    sql += std::string("SELECT start, end FROM ") + table;
  }
  for (StepSummary& s : steps) s.gpu_busy_ns = 0;
  if (sql.empty() || steps.empty()) return;
  std::vector<std::size_t> order(steps.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return steps[a].start_ns < steps[b].start_ns; });
  std::size_t first = 0;
  const auto add_interval = [&](long long a, long long b) {
    while (first < order.size() && steps[order[first]].end_ns <= a) ++first;
    for (std::size_t i = first; i < order.size() && steps[order[i]].start_ns < b; ++i) {
      StepSummary& s = steps[order[i]];
      const long long overlap = std::min(b, s.end_ns) - std::max(a, s.start_ns);
      if (overlap > 0) *s.gpu_busy_ns += overlap;
    }
  };
  Statement rows = db.prepare(sql + " ORDER BY 1");
  bool have = false;
  long long run_start = 0;
  long long run_end = 0;
  while (rows.step()) {
    const long long a = rows.integer(0);
    const long long b = rows.integer(1);
    if (have && a <= run_end) {
      run_end = std::max(run_end, b);
      continue;
    }
    if (have) add_interval(run_start, run_end);
    have = true;
    run_start = a;
    run_end = b;
  }
  if (have) add_interval(run_start, run_end);
}

// A table of (name id, duration) rows summarised by name, names from StringIds.
std::vector<SummaryRow> summarize_named_durations(Statement rows, Strings& strings,
                                                  std::size_t keep, long long* distinct) {
  GroupedDurations durations;
  Interner<long long> ids;
  std::vector<long long> id_of_key;
  while (rows.step()) {
    const long long id = rows.is_null(0) ? -1 : rows.integer(0);
    const auto [key, inserted] = ids.add(id);
    if (inserted) id_of_key.push_back(id);
    durations.add(key, rows.integer(1));
  }
  std::vector<std::string> names;
  for (long long id : id_of_key) names.push_back(strings.get(id).value_or(std::to_string(id)));
  std::vector<SummaryRow> all = summary_rows({{&durations, &names}}, SIZE_MAX);
  if (distinct != nullptr) *distinct = static_cast<long long>(all.size());
  if (all.size() > keep) all.resize(keep);
  return all;
}

// Interim: grouped by name only until the kernel summary groups by full name, grid and block.
std::vector<KernelRow> kernel_summary(const Database& db, Strings& strings, std::size_t keep,
                                      long long* distinct) {
  const auto columns = db.columns("CUPTI_ACTIVITY_KIND_KERNEL");
  std::vector<std::string> name_columns;
  for (const char* c : {"shortName", "demangledName", "mangledName"}) {
    if (columns.count(c)) name_columns.push_back(c);
  }
  if (!columns.count("start") || !columns.count("end") || name_columns.empty()) return {};
  std::string name = name_columns.size() == 1 ? name_columns[0] : "COALESCE(";
  if (name_columns.size() > 1) {
    for (std::size_t i = 0; i < name_columns.size(); ++i) {
      name += (i ? ", " : "") + name_columns[i];
    }
    name += ")";
  }
  std::vector<KernelRow> rows;
  for (SummaryRow& r : summarize_named_durations(
           db.prepare("SELECT " + name + ", end - start FROM CUPTI_ACTIVITY_KIND_KERNEL"), strings,
           keep, distinct)) {
    rows.push_back({std::move(r.name), "", "", false, r.time_percent, r.stats});
  }
  return rows;
}

std::vector<SummaryRow> osrt_summary(const Database& db, Strings& strings) {
  const auto columns = db.columns("OSRT_API");
  if (!columns.count("start") || !columns.count("end") || !columns.count("nameId")) return {};
  const std::string filter =
      columns.count("eventClass") ? " WHERE eventClass = " + std::to_string(kOsrtApiClass) : "";
  return summarize_named_durations(db.prepare("SELECT nameId, end - start FROM OSRT_API" + filter),
                                   strings, SIZE_MAX, nullptr);
}

}  // namespace

ProcessSummary summarize_export(const fs::path& sqlite_export, const SummaryOptions& options) {
  const Database db(sqlite_export);
  Strings strings(db);
  ProcessSummary summary;
  summary.export_file = sqlite_export;
  summary.has_nvtx = db.has_table("NVTX_EVENTS");
  summary.has_gpu = db.has_table("CUPTI_ACTIVITY_KIND_KERNEL") ||
                    db.has_table("CUPTI_ACTIVITY_KIND_MEMCPY") ||
                    db.has_table("CUPTI_ACTIVITY_KIND_MEMSET");
  summary.has_osrt = db.has_table("OSRT_API");

  if (summary.has_nvtx) {
    std::optional<analyze::NvtxSummary> nvtx =
        analyze::summarize_nvtx(sqlite_export, db, options, false);
    if (!nvtx) nvtx = analyze::summarize_nvtx(sqlite_export, db, options, true);
    summary.nvtx = std::move(nvtx->rows);
    summary.steps = std::move(nvtx->steps);
  }
  if (summary.has_gpu) {
    summary.kernels = kernel_summary(db, strings, options.top_kernels, &summary.kernel_names);
    add_gpu_busy(db, summary.steps);
  }
  if (summary.has_osrt) summary.osrt = osrt_summary(db, strings);
  return summary;
}

}  // namespace nsel
