// One pass over NVTX_EVENTS (rows come in start order in every export seen; anything else is
// read again sorted) gives the NVTX summary, the steps and each step's top-level ranges; the
// kernel and OS runtime tables give their own summaries. Memory stays bounded: durations go
// through GroupedDurations, and nesting needs only one stack per thread.
#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "analyze/duration_stats.hpp"
#include "analyze/sqlite_db.hpp"
#include "nsel/error.hpp"
#include "nsel/report_layout.hpp"
#include "nsel/report_summary.hpp"

namespace nsel {
namespace fs = std::filesystem;

double round_like_sqlite(double value, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

StepNamePattern::StepNamePattern(std::string_view pattern, std::string_view source)
    : text_(pattern) {
  const std::size_t at = pattern.find("{n}");
  if (at == std::string_view::npos || pattern.find("{n}", at + 1) != std::string_view::npos) {
    throw Error(bad_value(source, pattern, "the step number's place \"{n}\" must appear once",
                          "an NVTX range name with {n} where the step number goes, for "
                          "example 'step {n}' or 'train_step_{n}'"));
  }
  prefix_ = pattern.substr(0, at);
  suffix_ = pattern.substr(at + 3);
}

std::optional<long long> StepNamePattern::match(std::string_view name) const {
  if (name.size() <= prefix_.size() + suffix_.size()) return std::nullopt;
  if (name.substr(0, prefix_.size()) != prefix_) return std::nullopt;
  if (name.substr(name.size() - suffix_.size()) != suffix_) return std::nullopt;
  const std::string_view number =
      name.substr(prefix_.size(), name.size() - prefix_.size() - suffix_.size());
  long long step = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), step);
  if (ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
  return step;
}

std::string ProcessIdentity::label() const {
  if (pid == 0) return worker;
  return worker + "/" + std::to_string(pid);
}

ProcessIdentity identify_report(const fs::path& report) {
  ProcessIdentity id;
  std::string name = report.filename().string();
  if (report.extension() == ".sqlite") name = report.stem().string() + ".nsys-rep";
  if (const auto parsed = parse_report_file_name(name)) {
    id.worker = parsed->worker;
    id.pid = parsed->pid;
    id.window = parsed->window;
  } else {
    id.worker = report.stem().string();
  }
  // Synced SLURM logs: <LOG_DIR>/ray/<node>/<session>/logs/nsight/<report>.
  std::vector<std::string> parts;
  for (const auto& part : report.parent_path()) parts.push_back(part.string());
  for (std::size_t i = 0; i + 2 < parts.size(); ++i) {
    if (parts[i] == "ray" && parts[i + 1].rfind("session_", 0) != 0 &&
        parts[i + 2].rfind("session_", 0) == 0) {
      id.node = parts[i + 1];
    }
  }
  // A manifest beside the report, when there is one, knows more (its format is provisional:
  // only these plain keys are read, and anything unreadable is ignored).
  for (const fs::path& manifest : {fs::path(report.string() + ".json"),
                                   report.parent_path() / (report.stem().string() + ".json")}) {
    std::ifstream in(manifest);
    if (!in) continue;
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object()) continue;
    if (j.contains("worker") && j["worker"].is_string()) id.worker = j["worker"];
    if (j.contains("rank") && j["rank"].is_number_integer()) id.rank = j["rank"].get<long long>();
    for (const char* key : {"node", "hostname", "host"}) {
      if (j.contains(key) && j[key].is_string()) {
        id.node = j[key];
        break;
      }
    }
    if (j.contains("pid") && j["pid"].is_number_integer()) id.pid = j["pid"].get<long long>();
    break;
  }
  return id;
}

namespace {

using analyze::Database;
using analyze::GroupedDurations;
using analyze::Statement;

constexpr long long kNvtxDomainCreate = 75;
constexpr long long kNvtxPushPopRange = 59;
constexpr long long kNvtxtPushPopRange = 70;
constexpr long long kNvtxStartEndRange = 60;
constexpr long long kOsrtApiClass = 27;
constexpr long long kPidBits = 0x0000FFFFFF000000LL;  // the process part of a globalTid

// Text of StringIds ids, looked up once each.
class Strings {
 public:
  explicit Strings(const Database& db) {
    if (db.has_table("StringIds"))
      lookup_.emplace(db.prepare("SELECT value FROM StringIds WHERE id=?"));
  }
  std::optional<std::string> get(long long id) {
    if (!lookup_) return std::nullopt;
    lookup_->reset();
    lookup_->bind(1, id);
    if (!lookup_->step()) return std::nullopt;
    return lookup_->text(0);
  }

 private:
  std::optional<Statement> lookup_;
};

// Dense numbers for distinct values, in first-seen order.
template <typename Value, typename Hash = std::hash<Value>>
class Interner {
 public:
  std::pair<std::uint32_t, bool> add(const Value& v) {
    const auto [it, inserted] = index_.try_emplace(v, static_cast<std::uint32_t>(index_.size()));
    return {it->second, inserted};
  }
  std::size_t size() const { return index_.size(); }

 private:
  std::unordered_map<Value, std::uint32_t, Hash> index_;
};

std::string column_or_null(const std::set<std::string>& columns, const std::string& name) {
  return columns.count(name) ? name : "NULL";
}

// Groups keys whose names are equal (as nsys groups by name) and builds the sorted table.
std::vector<SummaryRow> summary_rows(GroupedDurations& durations,
                                     const std::vector<std::string>& name_of_key,
                                     std::size_t keep) {
  Interner<std::string> names;
  std::vector<std::string> group_names;
  std::vector<std::uint32_t> group_of_key;
  for (const std::string& name : name_of_key) {
    const auto [group, inserted] = names.add(name);
    if (inserted) group_names.push_back(name);
    group_of_key.push_back(group);
  }
  const std::vector<DurationStats> stats = durations.finish(group_of_key, group_names.size());
  std::vector<SummaryRow> rows;
  long long grand_total = 0;
  for (std::size_t g = 0; g < stats.size(); ++g) {
    if (stats[g].count == 0) continue;
    rows.push_back({group_names[g], 0, stats[g]});
    grand_total += stats[g].total;
  }
  for (SummaryRow& row : rows) {
    row.time_percent = grand_total == 0
                           ? 0
                           : round_like_sqlite(static_cast<double>(row.stats.total) * 100.0 /
                                                   static_cast<double>(grand_total),
                                               1);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const SummaryRow& a, const SummaryRow& b) {
    return a.stats.total != b.stats.total ? a.stats.total > b.stats.total : a.name < b.name;
  });
  if (rows.size() > keep) rows.resize(keep);
  return rows;
}

struct TextKey {
  long long domain;
  long long pid;
  std::uint32_t text;
  bool operator==(const TextKey&) const = default;
};
struct TextKeyHash {
  std::size_t operator()(const TextKey& k) const {
    return std::hash<long long>()(k.domain * 1000003 + k.pid) ^ (std::size_t{k.text} << 1);
  }
};
struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

struct StepFound {
  long long step = 0;
  long long start = 0;
  std::optional<long long> end;  // nullopt: still open when the capture ended
  std::map<std::uint32_t, long long> shares;
  std::vector<std::pair<std::uint32_t, long long>> open_shares;  // (key, start)
};

struct OutOfOrder {};  // rows not in start order: read again, sorted

struct NvtxScan {
  bool out_of_order = false;
  std::vector<SummaryRow> rows;
  std::vector<StepFound> steps;
  std::vector<std::string> name_of_key;
  long long last_time = 0;
};

NvtxScan scan_nvtx(const Database& db, Strings& strings, const StepNamePattern& step_name,
                   bool sorted) {
  const std::set<std::string> columns = db.columns("NVTX_EVENTS");
  NvtxScan scan;
  for (const char* needed : {"start", "end", "eventType"}) {
    if (!columns.count(needed)) return scan;  // not a form we know: no NVTX data
  }

  std::unordered_map<long long, std::uint32_t> text_of_id;
  std::unordered_map<std::string, std::uint32_t, TextHash, std::equal_to<>> text_of_string;
  std::vector<std::string> texts;
  std::unordered_map<TextKey, std::uint32_t, TextKeyHash> key_of;
  struct KeyInfo {
    long long domain;
    long long pid;
    std::uint32_t text;
    std::optional<long long> step;
  };
  std::vector<KeyInfo> keys;
  std::map<std::pair<long long, long long>, std::string> domains;  // (domainId, pid) -> name

  struct Frame {
    long long end;  // LLONG_MAX while open
    int step = -1;  // index into scan.steps when this frame is a step
  };
  std::unordered_map<long long, std::vector<Frame>> stacks;  // per thread
  std::vector<Frame>* stack = nullptr;                       // the last row's thread's
  long long stack_tid = 0;
  std::vector<std::pair<std::uint32_t, long long>> open_ranges;
  GroupedDurations durations;
  long long previous_start = LLONG_MIN;
  long long last_time = 0;

  std::uint32_t last_text_index = UINT32_MAX;
  const auto text_index = [&](const analyze::RowValues& r) -> std::uint32_t {
    if (r.type(3) == SQLITE_INTEGER) {
      const long long id = r.integer(3);
      const auto found = text_of_id.find(id);
      if (found != text_of_id.end()) return found->second;
      const auto index = static_cast<std::uint32_t>(texts.size());
      texts.push_back(strings.get(id).value_or(""));
      text_of_id.emplace(id, index);
      return index;
    }
    const std::string_view text = r.text(3);
    // Runs of the same name are common (a loop of small ranges): skip the hash then.
    if (last_text_index < texts.size() && texts[last_text_index] == text) return last_text_index;
    const auto found = text_of_string.find(text);
    if (found != text_of_string.end()) return last_text_index = found->second;
    const auto index = static_cast<std::uint32_t>(texts.size());
    texts.emplace_back(text);
    text_of_string.emplace(std::string(text), index);
    return last_text_index = index;
  };

  const auto row = [&](const analyze::RowValues& rows) {
    const long long start = rows.integer(0);
    const long long raw_end = rows.integer(1);
    const bool open = raw_end < 0;
    const long long end = open ? LLONG_MAX : raw_end;
    const long long type = rows.integer(2);
    last_time = std::max(last_time, open ? start : std::max(start, end));
    if (start < previous_start) {
      throw OutOfOrder();
    }
    previous_start = start;
    const long long tid = rows.integer(5);
    const long long pid = tid & kPidBits;
    if (type == kNvtxDomainCreate) {
      domains.try_emplace({rows.integer(4), pid}, rows.text(3));  // the earliest one wins
      return;
    }
    const bool push_pop = type == kNvtxPushPopRange || type == kNvtxtPushPopRange;
    if (!push_pop && type != kNvtxStartEndRange) return;

    const std::uint32_t text = text_index(rows);
    const long long domain = rows.integer(4);
    const auto [it, inserted] =
        key_of.try_emplace({domain, pid, text}, static_cast<std::uint32_t>(keys.size()));
    if (inserted) keys.push_back({domain, pid, text, step_name.match(texts[text])});
    const std::uint32_t key = it->second;
    const KeyInfo& info = keys[key];

    int step_index = -1;
    if (info.step) {
      step_index = static_cast<int>(scan.steps.size());
      scan.steps.push_back({*info.step, start, open ? std::nullopt : std::optional(end), {}, {}});
    }
    if (!push_pop) return;  // start/end ranges: steps only, as nvtxppsum leaves them out

    if (open) {
      open_ranges.emplace_back(key, start);
    } else {
      durations.add(key, end - start);
    }
    // Push/pop ranges nest per thread: the parent is the innermost range still running.
    if (stack == nullptr || tid != stack_tid) {
      stack = &stacks[tid];
      stack_tid = tid;
    }
    while (!stack->empty() && stack->back().end < end) stack->pop_back();
    if (step_index < 0 && !stack->empty() && stack->back().step >= 0) {
      StepFound& step = scan.steps[static_cast<std::size_t>(stack->back().step)];
      if (open) {
        step.open_shares.emplace_back(key, start);
      } else {
        step.shares[key] += end - start;
      }
    }
    stack->push_back({end, step_index});
  };

  // Few columns and no NULL checks per row: at millions of rows, each value read counts.
  try {
    db.scan("NVTX_EVENTS",
            {"start", "ifnull(end, -1)", "eventType",
             "coalesce(" + column_or_null(columns, "textId") + ", " +
                 column_or_null(columns, "text") + ")",
             "ifnull(" + column_or_null(columns, "domainId") + ", -1)",
             "ifnull(" + column_or_null(columns, "globalTid") + ", 0)"},
            sorted ? "start" : "", row);
  } catch (const OutOfOrder&) {
    scan.out_of_order = true;
    return scan;
  }

  // Ranges never closed last until the last event, as nvtxppsum counts them.
  for (const auto& [key, start] : open_ranges) durations.add(key, last_time - start);
  for (StepFound& step : scan.steps) {
    if (!step.end) step.end = last_time;
    for (const auto& [key, start] : step.open_shares) step.shares[key] += last_time - start;
  }

  // nvtxppsum's names: "<domain>:<text>" for ranges of a named domain, else the text.
  for (const KeyInfo& info : keys) {
    const auto domain = domains.find({info.domain, info.pid});
    scan.name_of_key.push_back(domain == domains.end() ? texts[info.text]
                                                       : domain->second + ":" + texts[info.text]);
  }
  scan.rows = summary_rows(durations, scan.name_of_key, SIZE_MAX);
  scan.last_time = last_time;
  return scan;
}

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
  std::vector<SummaryRow> all = summary_rows(durations, names, SIZE_MAX);
  if (distinct != nullptr) *distinct = static_cast<long long>(all.size());
  if (all.size() > keep) all.resize(keep);
  return all;
}

std::vector<SummaryRow> kernel_summary(const Database& db, Strings& strings, std::size_t keep,
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
  return summarize_named_durations(
      db.prepare("SELECT " + name + ", end - start FROM CUPTI_ACTIVITY_KIND_KERNEL"), strings, keep,
      distinct);
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
    NvtxScan scan = scan_nvtx(db, strings, options.step_name, false);
    if (scan.out_of_order) scan = scan_nvtx(db, strings, options.step_name, true);
    summary.nvtx = std::move(scan.rows);
    for (StepFound& found : scan.steps) {
      StepSummary step;
      step.step = found.step;
      step.start_ns = found.start;
      step.end_ns = *found.end;
      // Keys number names in the order they first appear, so this keeps the step's own order
      // (forward, backward, optimizer); keys of equal names add up.
      for (const auto& [key, ns] : found.shares) {
        const std::string& name = scan.name_of_key[key];
        const auto same = std::find_if(step.shares.begin(), step.shares.end(),
                                       [&](const RangeShare& r) { return r.range == name; });
        if (same == step.shares.end()) {
          step.shares.push_back({name, ns});
        } else {
          same->ns += ns;
        }
      }
      summary.steps.push_back(std::move(step));
    }
  }
  if (summary.has_gpu) {
    summary.kernels = kernel_summary(db, strings, options.top_kernels, &summary.kernel_names);
    add_gpu_busy(db, summary.steps);
  }
  if (summary.has_osrt) summary.osrt = osrt_summary(db, strings);
  return summary;
}

}  // namespace nsel
