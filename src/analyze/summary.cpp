// A process's summary from its export: the NVTX part (nvtx_summary.cpp), CUDA kernels and GPU
// busy time per step, and the OS runtime summary.
#include "nsel/analyze/summary.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analyze/duration_stats.hpp"
#include "analyze/nvtx_summary.hpp"
#include "analyze/sqlite_db.hpp"
#include "analyze/summary_tables.hpp"
#include "nsel/core/error.hpp"

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

// One GPU activity interval (a kernel, copy or set) and the device it ran on.
struct GpuInterval {
  long long start;
  long long end;
  long long device;  // -1: unknown
  long long pid;     // globalPid; -1: unknown
  bool communication;
};

// The union of `intervals` (sorted here: an export's rows may come in any order) as disjoint
// runs in start order.
std::vector<std::pair<long long, long long>> union_runs(std::vector<GpuInterval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const GpuInterval& a, const GpuInterval& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  std::vector<std::pair<long long, long long>> runs;
  for (const GpuInterval& i : intervals) {
    if (!runs.empty() && i.start <= runs.back().second) {
      runs.back().second = std::max(runs.back().second, i.end);
    } else {
      runs.emplace_back(i.start, i.end);
    }
  }
  return runs;
}

// For each step (in `order`, by start), how much of it the runs cover.
std::vector<long long> covered(const std::vector<std::pair<long long, long long>>& runs,
                               const std::vector<StepSummary>& steps,
                               const std::vector<std::size_t>& order) {
  std::vector<long long> out(steps.size(), 0);
  std::size_t first = 0;
  for (const auto& [a, b] : runs) {
    while (first < order.size() && steps[order[first]].end_ns <= a) ++first;
    // Steps may overlap (several threads' loops), so every step from `first` on is looked at
    // until one starts after the run.
    for (std::size_t i = first; i < order.size() && steps[order[i]].start_ns < b; ++i) {
      const StepSummary& s = steps[order[i]];
      const long long overlap = std::min(b, s.end_ns) - std::max(a, s.start_ns);
      if (overlap > 0) out[order[i]] += overlap;
    }
  }
  return out;
}

// GPU busy, communication and compute time of each step: unions of the intervals inside the
// step, on the devices of the step's process (the devices its kernels, copies and sets ran on;
// every device when the process is unknown or has no GPU activity of its own).
void add_gpu_time(const Database& db, const std::vector<GpuInterval>& kernels,
                  std::vector<StepSummary>& steps) {
  for (StepSummary& s : steps) {
    s.gpu_busy_ns = 0;
    s.communication_ns = 0;
    s.compute_ns = 0;
  }
  if (steps.empty()) return;
  std::vector<GpuInterval> all = kernels;
  for (const char* table : {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
    const auto columns = db.columns(table);
    if (!columns.count("start") || !columns.count("end")) continue;
    const std::string device = columns.count("deviceId") ? "deviceId" : "NULL";
    const std::string pid = columns.count("globalPid") ? "globalPid" : "NULL";
    db.scan(table, {"start", "end", device, pid}, "", [&](const analyze::RowValues& r) {
      const long long start = r.time(0);
      all.push_back({start, r.end_time(1, start), r.integer_or(2, -1), r.integer_or(3, -1), false});
    });
  }
  // The devices each process used (runs of one process and device are the rule: skip them).
  std::map<long long, std::set<long long>> devices_of_process;
  long long last_pid = -2;
  long long last_device = -2;
  for (const GpuInterval& i : all) {
    if (i.pid == last_pid && i.device == last_device) continue;
    last_pid = i.pid;
    last_device = i.device;
    if (i.pid != -1 && i.device != -1) devices_of_process[i.pid].insert(i.device);
  }
  // Steps grouped by the device set they are measured on (one group in a one-process report).
  std::map<std::optional<std::set<long long>>, std::vector<std::size_t>> steps_of_devices;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::optional<std::set<long long>> devices;
    if (steps[i].global_pid) {
      const auto found = devices_of_process.find(*steps[i].global_pid);
      if (found != devices_of_process.end()) devices = found->second;
    }
    steps_of_devices[devices].push_back(i);
  }
  for (auto& [devices, order] : steps_of_devices) {
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return steps[a].start_ns < steps[b].start_ns; });
    std::vector<GpuInterval> mine;
    std::vector<GpuInterval> communication;
    for (const GpuInterval& i : all) {
      if (devices && !devices->count(i.device)) continue;
      mine.push_back(i);
      if (i.communication) communication.push_back(i);
    }
    const std::vector<long long> busy = covered(union_runs(std::move(mine)), steps, order);
    const std::vector<long long> talk = covered(union_runs(std::move(communication)), steps, order);
    for (std::size_t i : order) {
      steps[i].gpu_busy_ns = busy[i];
      steps[i].communication_ns = talk[i];
      // The communication union lies inside the busy union: the rest of it is compute.
      steps[i].compute_ns = busy[i] - talk[i];
    }
  }
}

// A table of (name id, start, end) rows summarised by name, names from StringIds.
std::vector<SummaryRow> summarize_named_durations(Statement rows, Strings& strings,
                                                  std::size_t keep, long long* distinct) {
  GroupedDurations durations;
  Interner<long long> ids;
  std::vector<long long> id_of_key;
  while (rows.step()) {
    const long long id = rows.is_null(0) ? -1 : rows.integer(0);
    const auto [key, inserted] = ids.add(id);
    if (inserted) id_of_key.push_back(id);
    const long long start = rows.time(1);
    const long long end = rows.time(2);
    if (end < start) {
      analyze::bad_export_value(rows.file(), "OSRT_API", "end", std::to_string(end),
                                "an end not before its start " + std::to_string(start));
    }
    durations.add(key, end - start);
  }
  std::vector<std::string> names;
  for (long long id : id_of_key) names.push_back(strings.get(id).value_or(std::to_string(id)));
  std::vector<SummaryRow> all = summary_rows({{&durations, &names}}, SIZE_MAX);
  if (distinct != nullptr) *distinct = static_cast<long long>(all.size());
  if (all.size() > keep) all.resize(keep);
  return all;
}

struct KernelKey {
  long long name_id;
  long long grid[3];
  long long block[3];
  bool operator==(const KernelKey&) const = default;
};
struct KernelKeyHash {
  std::size_t operator()(const KernelKey& k) const {
    std::size_t h = std::hash<long long>()(k.name_id);
    for (long long v : {k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2]}) {
      h = h * 1000003 ^ std::hash<long long>()(v);
    }
    return h;
  }
};

std::string dimensions(const long long (&xyz)[3]) {
  return std::to_string(xyz[0]) + " " + std::to_string(xyz[1]) + " " + std::to_string(xyz[2]);
}

// One row per kernel name, grid and block, as gpukernsum (2022.4) and cuda_gpu_kern_gb_sum
// (2023.4): the demangled name (the short name with short_kernel_names, as their `base`
// option), rows by total time, then instances, name, grid and block (2023.4's order; 2022.4
// orders by total only). Also hands back every kernel's interval for the per-step GPU time.
std::vector<KernelRow> kernel_summary(const Database& db, Strings& strings,
                                      const SummaryOptions& options, long long* distinct,
                                      std::vector<GpuInterval>& intervals) {
  const auto columns = db.columns("CUPTI_ACTIVITY_KIND_KERNEL");
  if (!columns.count("start") || !columns.count("end")) return {};
  const auto column = [&](const char* c) { return columns.count(c) ? std::string(c) : "NULL"; };
  std::string name = column("demangledName");
  if (options.short_kernel_names && columns.count("shortName")) {
    name = "COALESCE(shortName, " + name + ")";
  } else if (!columns.count("demangledName")) {
    name = column("shortName");
  }
  GroupedDurations durations;
  Interner<KernelKey, KernelKeyHash> keys;
  std::vector<KernelKey> key_list;
  // Communication or not, per name id: the short name says it best, when there is one.
  std::unordered_map<long long, bool> communication_of;
  const std::string short_name = columns.count("shortName") ? "shortName" : name;
  db.scan(
      "CUPTI_ACTIVITY_KIND_KERNEL",
      {"start", "end", name, column("gridX"), column("gridY"), column("gridZ"), column("blockX"),
       column("blockY"), column("blockZ"), column("deviceId"), short_name, column("globalPid")},
      "", [&](const analyze::RowValues& r) {
        const long long start = r.time(0);
        const long long end = r.end_time(1, start);
        // A missing grid or block column reads as NULL: 0, as before values were checked.
        KernelKey key{r.integer_or(2, -1),
                      {r.integer_or(3, 0), r.integer_or(4, 0), r.integer_or(5, 0)},
                      {r.integer_or(6, 0), r.integer_or(7, 0), r.integer_or(8, 0)}};
        const auto [index, inserted] = keys.add(key);
        if (inserted) key_list.push_back(key);
        durations.add(index, end - start);
        const long long short_id = r.integer_or(10, -1);
        auto talk = communication_of.find(short_id);
        if (talk == communication_of.end()) {
          talk = communication_of
                     .emplace(short_id, is_communication_kernel(strings.get(short_id).value_or("")))
                     .first;
        }
        intervals.push_back({start, end, r.integer_or(9, -1), r.integer_or(11, -1), talk->second});
      });
  // Keys whose name ids carry the same text are one row, as 2023.4 groups by the text.
  std::map<std::tuple<std::string, std::string, std::string>, std::uint32_t> group_of;
  std::vector<std::uint32_t> group_of_key;
  std::vector<KernelRow> rows;
  for (const KernelKey& key : key_list) {
    std::string text = strings.get(key.name_id).value_or(std::to_string(key.name_id));
    std::string grid = dimensions(key.grid);
    std::string block = dimensions(key.block);
    const auto [it, inserted] =
        group_of.try_emplace({text, grid, block}, static_cast<std::uint32_t>(rows.size()));
    if (inserted) {
      KernelRow row;
      row.name = std::move(text);
      row.grid = std::move(grid);
      row.block = std::move(block);
      rows.push_back(std::move(row));
    }
    group_of_key.push_back(it->second);
  }
  const std::vector<DurationStats> stats = durations.finish(group_of_key, rows.size());
  long long grand_total = 0;
  for (std::size_t g = 0; g < rows.size(); ++g) {
    rows[g].stats = stats[g];
    rows[g].communication = is_communication_kernel(rows[g].name);
    grand_total = analyze::add_ns(grand_total, stats[g].total);
  }
  for (KernelRow& row : rows) {
    row.time_percent = analyze::time_percent(row.stats.total, grand_total);
  }
  const auto dims = [](const std::string& text) {
    std::array<long long, 3> v{};
    std::sscanf(text.c_str(), "%lld %lld %lld", &v[0], &v[1], &v[2]);
    return v;
  };
  std::sort(rows.begin(), rows.end(), [&](const KernelRow& a, const KernelRow& b) {
    if (a.stats.total != b.stats.total) return a.stats.total > b.stats.total;
    if (a.stats.count != b.stats.count) return a.stats.count < b.stats.count;
    if (a.name != b.name) return a.name < b.name;
    if (a.grid != b.grid) return dims(a.grid) < dims(b.grid);
    return dims(a.block) < dims(b.block);
  });
  if (distinct != nullptr) *distinct = static_cast<long long>(rows.size());
  if (rows.size() > options.top_kernels) rows.resize(options.top_kernels);
  return rows;
}

std::vector<SummaryRow> osrt_summary(const Database& db, Strings& strings) {
  const auto columns = db.columns("OSRT_API");
  if (!columns.count("start") || !columns.count("end") || !columns.count("nameId")) return {};
  const std::string filter =
      columns.count("eventClass") ? " WHERE eventClass = " + std::to_string(kOsrtApiClass) : "";
  return summarize_named_durations(db.prepare("SELECT nameId, start, end FROM OSRT_API" + filter),
                                   strings, SIZE_MAX, nullptr);
}

}  // namespace

bool is_communication_kernel(std::string_view name) {
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  // "ns::ncclKernel_..." or a template's arguments: the base name is what follows the last
  // "::" before any '(' or '<'.
  const std::size_t args = name.find_first_of("(<");
  const std::size_t scope = name.substr(0, args).rfind("::");
  if (scope != std::string_view::npos) name.remove_prefix(scope + 2);
  const auto starts = [&](std::string_view prefix) {
    if (name.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
      const char c = name[i];
      if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != prefix[i]) return false;
    }
    return true;
  };
  return starts("nccl") || starts("rccl") || starts("msccl");
}

namespace {

// Tables every Nsight Systems export we know holds at least one of (the ones nsel reads and
// nsys's metadata): a database with none is someone else's, not an export with no data.
constexpr const char* kExportTables[] = {"StringIds",
                                         "NVTX_EVENTS",
                                         "CUPTI_ACTIVITY_KIND_KERNEL",
                                         "CUPTI_ACTIVITY_KIND_MEMCPY",
                                         "CUPTI_ACTIVITY_KIND_MEMSET",
                                         "OSRT_API",
                                         "EXPORT_META_DATA",
                                         "META_DATA_EXPORT",
                                         "TARGET_INFO_SESSION_START_TIME"};

void check_is_export(const fs::path& file, const Database& db) {
  std::error_code ec;
  if (fs::file_size(file, ec) == 0 && !ec) {
    throw Error(quote(file.string()) + ": is not an Nsight Systems export: empty file (0 bytes)",
                1);
  }
  for (const char* table : kExportTables) {
    if (db.has_table(table)) return;
  }
  throw Error(quote(file.string()) +
                  ": is not an Nsight Systems export: a SQLite database without any of nsys's "
                  "tables (StringIds, NVTX_EVENTS, CUPTI_ACTIVITY_KIND_KERNEL, ...)",
              1);
}

ProcessSummary summarize_checked_export(const fs::path& sqlite_export, const Database& db,
                                        const SummaryOptions& options) {
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
    if (!nvtx) {  // summarize_nvtx promises otherwise; never read an empty optional
      throw Error(quote(sqlite_export.string()) + ": NVTX_EVENTS cannot be read in order", 1);
    }
    summary.nvtx = std::move(nvtx->rows);
    summary.steps = std::move(nvtx->steps);
  }
  if (summary.has_gpu) {
    std::vector<GpuInterval> kernels;
    summary.kernels = kernel_summary(db, strings, options, &summary.kernel_names, kernels);
    add_gpu_time(db, kernels, summary.steps);
  }
  if (summary.has_osrt) summary.osrt = osrt_summary(db, strings);
  return summary;
}

}  // namespace

ProcessSummary summarize_export(const fs::path& sqlite_export, const SummaryOptions& options) {
  const Database db(sqlite_export);
  check_is_export(sqlite_export, db);
  try {
    return summarize_checked_export(sqlite_export, db, options);
  } catch (const Error& e) {
    // Every failure names the file once (a sum that overflows is found far from the file).
    const std::string named = quote(sqlite_export.string());
    if (std::string_view(e.what()).substr(0, named.size()) == named) throw;
    throw Error(named + ": " + e.what(), e.exit_code());
  }
}

std::optional<std::string> steps_without_ranges(const ProcessSummary& process) {
  if (!process.has_nvtx || process.steps.empty()) return std::nullopt;
  for (const StepSummary& step : process.steps) {
    if (!step.shares.empty()) return std::nullopt;
  }
  const std::size_t n = process.steps.size();
  return "its " + std::to_string(n) + (n == 1 ? " step holds" : " steps hold") +
         " no NVTX range inside: the program marks none, or its ranges were not recorded (the "
         "'nvtx' Python package 0.2.17, for one, records none under Nsight Systems 2022.4 or "
         "2023.4); mark them with nsel.range(\"forward\") in Python or nvtxRangePushA / "
         "nsel_range_push in C and C++";
}

}  // namespace nsel
