// One pass over NVTX_EVENTS (rows come in start order in every export seen; anything else is
// read again sorted), split into runs of rows read at once, gives the NVTX summary, the steps
// and each step's top-level ranges.
// Memory stays bounded: durations go through GroupedDurations, nesting needs one stack per
// thread, and the ranges a run cannot nest alone wait on disk past a small buffer (Orphan).
#include "analyze/nvtx_summary.hpp"

#include <algorithm>
#include <climits>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <unordered_map>

#include "analyze/duration_stats.hpp"
#include "analyze/spilled_records.hpp"
#include "analyze/summary_tables.hpp"
#include "nsel/analyze/range_names.hpp"
#include "nsel/core/error.hpp"

namespace nsel::analyze {
namespace fs = std::filesystem;

namespace {

constexpr long long kNvtxDomainCreate = 75;
constexpr long long kNvtxPushPopRange = 59;
constexpr long long kNvtxtPushPopRange = 70;
constexpr long long kNvtxStartEndRange = 60;
constexpr long long kPidBits = 0x0000FFFFFF000000LL;  // the process part of a globalTid
// A globalTid's globalPid, as GPU activity rows carry it (the process and the bits above).
constexpr long long kProcessOfTid = static_cast<long long>(0xFFFFFFFFFF000000ULL);

std::string column_or_null(const std::set<std::string>& columns, const std::string& name) {
  return columns.count(name) ? name : "NULL";
}

struct TextKey {
  long long domain;
  long long pid;
  std::uint32_t text;
  bool operator==(const TextKey&) const = default;
};
struct TextKeyHash {
  std::size_t operator()(const TextKey& k) const {
    // Unsigned: an export's domain and thread ids may be any 64-bit values.
    const unsigned long long mixed = static_cast<unsigned long long>(k.domain) * 1000003ULL +
                                     static_cast<unsigned long long>(k.pid);
    return std::hash<unsigned long long>()(mixed) ^ (std::size_t{k.text} << 1);
  }
};
struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

struct OutOfOrder {};  // rows not in start order: read again, sorted

constexpr long long kRowsPerChunkAtLeast = 50000;
constexpr unsigned kMostChunks = 4;
constexpr std::size_t kOrphansInMemory = 1 << 12;  // 128 KiB, the rest on disk

// A step's top-level ranges by key: (ns, first start).
using Shares = std::map<std::uint32_t, std::pair<long long, long long>>;

struct StepFound {
  long long step = 0;
  std::optional<long long> tid;  // the thread that pushed it
  long long start = 0;
  std::optional<long long> end;  // nullopt: still open when the capture ended
  Shares shares;
  std::vector<std::pair<std::uint32_t, long long>> open_shares;  // (key, start)

  // A top-level range of the step; one still open (end LLONG_MAX) is measured once the
  // capture's end is known.
  void add_range(std::uint32_t key, long long range_start, long long range_end) {
    if (range_end == LLONG_MAX) {
      open_shares.emplace_back(key, range_start);
    } else {
      long long& ns = shares.try_emplace(key, 0, range_start).first->second.first;
      ns = add_ns(ns, range_end - range_start);
    }
  }
};

struct Frame {
  long long end;  // LLONG_MAX while open
  int step = -1;  // index into the run's steps when this frame is one of its steps
};

// A push/pop range of a later run whose parent, if any, began in an earlier run: it is only
// known once the earlier runs are read, from the stacks they leave open.
struct Orphan {
  long long tid;
  long long start;
  long long end;  // LLONG_MAX while open
  std::uint32_t key;
  bool step;  // a step itself, which is nobody's share
};

// Where a row sits in the order nesting needs: by start, then the longest first (an open range
// lasts longest), then by thread and name, so that ranges of one thread that begin together
// nest the same way whatever order the export's rows come in (exports seen so far store rows
// by start, ties of different threads in any order).
struct RowOrder {
  long long start = LLONG_MIN;
  long long end = LLONG_MAX;
  long long tid = LLONG_MIN;
  long long text_id = LLONG_MIN;
  bool operator<=(const RowOrder& b) const {
    if (start != b.start) return start < b.start;
    if (end != b.end) return end > b.end;
    if (tid != b.tid) return tid < b.tid;
    return text_id <= b.text_id;
  }
};
// The SQL order of the same (NULLs sort first in SQLite; an open range's end is NULL).
std::string row_order_sql(const std::string& tid, const std::string& text_id) {
  return "start, end IS NULL DESC, end DESC, " + tid + ", " + text_id;
}

// What one thread learns from one run of rows of NVTX_EVENTS.
struct ChunkScan {
  bool out_of_order = false;
  bool any = false;  // rows were read
  RowOrder first_row;
  RowOrder last_row;
  long long last_time = 0;
  std::unique_ptr<GroupedDurations> durations = std::make_unique<GroupedDurations>();
  std::vector<std::pair<std::uint32_t, long long>> open_ranges;  // (key, start)
  std::vector<StepFound> steps;
  // In start order; never any in the first run, where nothing began before.
  std::unique_ptr<SpilledRecords<Orphan>> orphans =
      std::make_unique<SpilledRecords<Orphan>>(kOrphansInMemory);
  std::unordered_map<long long, std::vector<Frame>> stacks;  // per thread, as the run ends
  struct KeyInfo {
    long long domain;
    long long pid;
    std::uint32_t text;
  };
  std::vector<std::string> texts;
  std::vector<KeyInfo> keys;
  std::map<std::pair<long long, long long>, std::pair<long long, std::string>> domains;
};

// The columns scan_chunk reads from NVTX_EVENTS, by their place in the SELECT (nvtx_select_list).
enum NvtxColumn : int {
  kStartColumn,
  kEndColumn,
  kEventTypeColumn,
  kTextIdColumn,
  kDomainIdColumn,
  kGlobalTidColumn,
  kTextColumn,
  kNvtxColumnCount
};

// The SELECT list in NvtxColumn order: plain columns (expressions cost SQLite more than a type
// check costs here), NULL for one this export lacks.
std::vector<std::string> nvtx_select_list(const std::set<std::string>& columns) {
  std::vector<std::string> list(kNvtxColumnCount);
  list[kStartColumn] = "start";
  list[kEndColumn] = "end";
  list[kEventTypeColumn] = "eventType";
  list[kTextIdColumn] = column_or_null(columns, "textId");
  list[kDomainIdColumn] = column_or_null(columns, "domainId");
  list[kGlobalTidColumn] = column_or_null(columns, "globalTid");
  list[kTextColumn] = column_or_null(columns, "text");
  return list;
}

// The checked values of one row of NVTX_EVENTS that every event type has.
struct NvtxRow {
  long long start = 0;
  long long end = LLONG_MAX;  // LLONG_MAX while open
  bool open = false;
  long long type = 0;
  long long tid = 0;
  bool has_tid = false;
  RowOrder order;
};

// One run of rows of NVTX_EVENTS read into a ChunkScan: names become dense keys, and push/pop
// ranges nest on one stack per thread.
class ChunkScanner {
 public:
  ChunkScanner(const fs::path& file, bool after_first, const StepNamePattern& step_name,
               ChunkScan& scan)
      : db_(file), strings_(db_), after_first_(after_first), step_name_(step_name), scan_(scan) {}

  // The rows with rowid in [first, last] (all when first < 0).
  void read(long long first, long long last, bool sorted) {
    const std::vector<std::string> select = nvtx_select_list(db_.columns("NVTX_EVENTS"));
    try {
      db_.scan("NVTX_EVENTS" + (first >= 0 ? " WHERE rowid BETWEEN " + std::to_string(first) +
                                                 " AND " + std::to_string(last)
                                           : std::string()),
               select, sorted ? row_order_sql(select[kGlobalTidColumn], select[kTextIdColumn]) : "",
               [this](const RowValues& values) { add_row(values); });
    } catch (const OutOfOrder&) {
      scan_.out_of_order = true;
    }
  }

 private:
  void add_row(const RowValues& values) {
    const NvtxRow row = checked_row(values);
    scan_.last_time = std::max(scan_.last_time, row.open ? row.start : row.end);
    check_start_order(row.order);
    const long long pid = row.tid & kPidBits;
    if (row.type == kNvtxDomainCreate) {
      // The earliest creation names the domain, as nvtxppsum takes it.
      scan_.domains.try_emplace({values.integer_or(kDomainIdColumn, -1), pid}, row.start,
                                valid_utf8(values.text(kTextColumn)));
      return;
    }
    const bool push_pop = row.type == kNvtxPushPopRange || row.type == kNvtxtPushPopRange;
    if (!push_pop && row.type != kNvtxStartEndRange) return;
    const std::uint32_t key = key_of_row(values, pid);
    const int step_index = add_step_if_one(row, key);
    if (!push_pop) return;  // start/end ranges: steps only, as nvtxppsum leaves them out

    if (row.open) {
      scan_.open_ranges.emplace_back(key, row.start);
    } else {
      scan_.durations->add(key, row.end - row.start);
    }
    nest(row, key, step_index);
  }

  // Every value is checked (type, range, end not before start): the sorted re-read and the
  // sums rely on whole numbers within kLatestTime.
  static NvtxRow checked_row(const RowValues& values) {
    NvtxRow row;
    row.start = values.time(kStartColumn);
    row.open = values.is_null(kEndColumn);
    row.end = row.open ? LLONG_MAX : values.end_time(kEndColumn, row.start);
    row.type = values.integer_or(kEventTypeColumn, 0);
    row.tid = values.integer_or(kGlobalTidColumn, 0);
    row.has_tid = !values.is_null(kGlobalTidColumn);
    row.order = {row.start, row.end, row.has_tid ? row.tid : LLONG_MIN,
                 values.integer_or(kTextIdColumn, LLONG_MIN)};
    return row;
  }

  // Rows in start order; ties in RowOrder's order only on one thread, where they nest.
  void check_start_order(const RowOrder& order) {
    if (!scan_.any) {
      scan_.first_row = order;
      scan_.any = true;
    } else if (order.start < scan_.last_row.start) {
      throw OutOfOrder();
    }
    scan_.last_row = order;
  }

  std::uint32_t text_of_row(const RowValues& values) {
    if (!values.is_null(kTextIdColumn)) {
      const long long id = values.integer(kTextIdColumn);
      const auto found = text_of_id_.find(id);
      if (found != text_of_id_.end()) return found->second;
      const auto index = static_cast<std::uint32_t>(scan_.texts.size());
      scan_.texts.push_back(strings_.get(id).value_or(""));
      text_of_id_.emplace(id, index);
      return index;
    }
    const std::string_view text = values.text(kTextColumn);
    // Runs of the same name are common (a loop of small ranges): skip the hash then.
    if (last_text_index_ < scan_.texts.size() && scan_.texts[last_text_index_] == text) {
      return last_text_index_;
    }
    const auto found = text_of_string_.find(text);
    if (found != text_of_string_.end()) return last_text_index_ = found->second;
    const auto index = static_cast<std::uint32_t>(scan_.texts.size());
    scan_.texts.push_back(valid_utf8(text));
    text_of_string_.emplace(std::string(text), index);
    return last_text_index_ = index;
  }

  // A range's key: its (domain, process, text).
  std::uint32_t key_of_row(const RowValues& values, long long pid) {
    const std::uint32_t text = text_of_row(values);
    const long long domain = values.integer_or(kDomainIdColumn, -1);
    const TextKey text_key{domain, pid, text};
    if (!(text_key == last_text_key_) || last_key_ == UINT32_MAX) {
      const auto [it, inserted] =
          key_of_.try_emplace(text_key, static_cast<std::uint32_t>(scan_.keys.size()));
      if (inserted) {
        scan_.keys.push_back({domain, pid, text});
        step_of_key_.push_back(step_name_.match(scan_.texts[text]));
      }
      last_text_key_ = text_key;
      last_key_ = it->second;
    }
    return last_key_;
  }

  // The step's index in scan_.steps when the range is a step, else -1.
  int add_step_if_one(const NvtxRow& row, std::uint32_t key) {
    if (!step_of_key_[key]) return -1;
    const int step_index = static_cast<int>(scan_.steps.size());
    scan_.steps.push_back({*step_of_key_[key],
                           row.has_tid ? std::optional(row.tid) : std::nullopt,
                           row.start,
                           row.open ? std::nullopt : std::optional(row.end),
                           {},
                           {}});
    return step_index;
  }

  // Push/pop ranges nest per thread: the parent is the innermost range still running. A range
  // without one in a later run is an Orphan; one directly under a step is its share.
  void nest(const NvtxRow& row, std::uint32_t key, int step_index) {
    if (stack_ == nullptr || row.tid != stack_tid_) {
      stack_ = &scan_.stacks[row.tid];
      thread_last_ = &last_of_thread_[row.tid];
      stack_tid_ = row.tid;
    }
    if (thread_last_->start == row.start && !(*thread_last_ <= row.order)) throw OutOfOrder();
    *thread_last_ = row.order;
    while (!stack_->empty() && stack_->back().end < row.end) stack_->pop_back();
    if (stack_->empty()) {
      if (after_first_) {
        scan_.orphans->push_back({row.tid, row.start, row.end, key, step_index >= 0});
      }
    } else if (step_index < 0 && stack_->back().step >= 0) {
      scan_.steps[static_cast<std::size_t>(stack_->back().step)].add_range(key, row.start, row.end);
    }
    stack_->push_back({row.end, step_index});
  }

  const Database db_;
  Strings strings_;
  const bool after_first_;
  const StepNamePattern& step_name_;
  ChunkScan& scan_;
  std::unordered_map<long long, std::uint32_t> text_of_id_;
  std::unordered_map<std::string, std::uint32_t, TextHash, std::equal_to<>> text_of_string_;
  std::unordered_map<TextKey, std::uint32_t, TextKeyHash> key_of_;
  std::vector<std::optional<long long>> step_of_key_;
  std::vector<Frame>* stack_ = nullptr;  // the last row's thread's
  long long stack_tid_ = 0;
  // The last push/pop row of each thread (RowOrder's start is LLONG_MIN before the first).
  std::unordered_map<long long, RowOrder> last_of_thread_;
  RowOrder* thread_last_ = nullptr;             // the last row's thread's
  std::uint32_t last_text_index_ = UINT32_MAX;  // the last text looked up by its string
  TextKey last_text_key_{0, 0, 0};  // the last row's key: runs of one name skip the hash
  std::uint32_t last_key_ = UINT32_MAX;
};

// The rows of NVTX_EVENTS with rowid in [first, last] (all when first < 0). Ranges are nested
// within the run alone; a run after the first notes the ranges left without a parent there, as
// their parents, if any, are in earlier runs (see Orphan).
void scan_chunk(const fs::path& file, long long first, long long last, bool after_first,
                bool sorted, const StepNamePattern& step_name, ChunkScan& scan) {
  ChunkScanner(file, after_first, step_name, scan).read(first, last, sorted);
}

// Adds `ns` of `name`, begun at `start`, to a step's shares.
void add_share(std::vector<RangeShare>& shares, const std::string& name, long long ns,
               long long start) {
  const auto same = std::find_if(shares.begin(), shares.end(),
                                 [&](const RangeShare& r) { return r.range == name; });
  if (same == shares.end()) {
    shares.push_back({name, ns, start});
  } else {
    same->ns = add_ns(same->ns, ns);
    same->first_start_ns = std::min(same->first_start_ns, start);
  }
}

void add_shares(std::vector<RangeShare>& shares, const StepFound& found,
                const std::vector<std::string>& names, long long last_time) {
  for (const auto& [key, share] : found.shares) {
    add_share(shares, names[key], share.first, share.second);
  }
  for (const auto& [key, start] : found.open_shares) {
    add_share(shares, names[key], last_time - start, start);
  }
}

// Runs of rowids [first, last] of about equal size, at most one per thread.
std::vector<std::pair<long long, long long>> row_runs(long long first, long long last,
                                                      unsigned threads) {
  const long long rows = last - first + 1;
  const long long count = std::clamp<long long>(
      rows / kRowsPerChunkAtLeast, 1, static_cast<long long>(std::min(threads, kMostChunks)));
  if (count == 1) return {{-1, -1}};
  std::vector<std::pair<long long, long long>> runs;
  for (long long c = 0; c < count; ++c) {
    runs.emplace_back(first + rows * c / count, first + rows * (c + 1) / count - 1);
  }
  return runs;
}

// The runs of rows to read at once: one ({-1, -1}, the whole table) unless several threads may
// read an unsorted table.
std::vector<std::pair<long long, long long>> table_runs(const Database& db,
                                                        const SummaryOptions& options,
                                                        bool sorted) {
  if (sorted || options.threads <= 1) return {{-1, -1}};
  // One query each: SQLite reads min() or max() of the rowid off the b-tree only when it is
  // the query's only aggregate; together they cost a scan of the whole table.
  // A table without rowids (none known so far) is read in one run rather than failing.
  try {
    Statement lowest = db.prepare("SELECT min(rowid) FROM NVTX_EVENTS");
    Statement highest = db.prepare("SELECT max(rowid) FROM NVTX_EVENTS");
    if (lowest.step() && !lowest.is_null(0) && highest.step()) {
      return row_runs(lowest.integer(0), highest.integer(0), options.threads);
    }
  } catch (const Error&) {
    // read in one run, below
  }
  return {{-1, -1}};
}

// Each run scanned by a thread of its own (the last by this one); the first error, by run, is
// thrown once all are done.
std::vector<ChunkScan> scan_chunks(const fs::path& file,
                                   const std::vector<std::pair<long long, long long>>& runs,
                                   bool sorted, const StepNamePattern& step_name) {
  std::vector<ChunkScan> chunks(runs.size());
  std::vector<std::exception_ptr> errors(runs.size());
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < runs.size(); ++c) {
    const auto work = [&, c] {
      try {
        scan_chunk(file, runs[c].first, runs[c].second, c > 0, sorted, step_name, chunks[c]);
      } catch (...) {
        errors[c] = std::current_exception();
      }
    };
    if (c + 1 < runs.size()) {
      threads.emplace_back(work);
    } else {
      work();
    }
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return chunks;
}

// Whether the runs' rows were in start order, each within itself and each run after the last.
// Throws when even the sorted read was not: SQLite's order of checked whole numbers is ours,
// never seen, but never a crash either.
bool in_start_order(const fs::path& file, const std::vector<ChunkScan>& chunks, bool sorted) {
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const bool unordered =
        chunks[c].out_of_order || (c > 0 && chunks[c].any && chunks[c - 1].any &&
                                   chunks[c].first_row.start < chunks[c - 1].last_row.start);
    if (!unordered) continue;
    if (sorted) {
      throw Error(quote(file.string()) +
                      ": not a readable Nsight Systems export: NVTX_EVENTS rows cannot be put "
                      "in start order",
                  1);
    }
    return false;
  }
  return true;
}

// The last event's time in any run.
long long capture_end(const std::vector<ChunkScan>& chunks) {
  long long last_time = 0;
  for (const ChunkScan& chunk : chunks) last_time = std::max(last_time, chunk.last_time);
  return last_time;
}

// Names of each run's keys: "<domain>:<text>" for ranges of a named domain, else the text, as
// nvtxppsum; a domain's name is its earliest creation's in any run.
std::vector<std::vector<std::string>> key_names(const std::vector<ChunkScan>& chunks) {
  std::map<std::pair<long long, long long>, std::pair<long long, std::string>> domains;
  for (const ChunkScan& chunk : chunks) {
    for (const auto& [id, named] : chunk.domains) {
      const auto [it, inserted] = domains.try_emplace(id, named);
      if (!inserted && named.first < it->second.first) it->second = named;
    }
  }
  std::vector<std::vector<std::string>> names(chunks.size());
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    for (const ChunkScan::KeyInfo& info : chunks[c].keys) {
      const auto domain = domains.find({info.domain, info.pid});
      const std::string& text = chunks[c].texts[info.text];
      names[c].push_back(domain == domains.end() ? text : domain->second.second + ":" + text);
    }
  }
  return names;
}

// Joins the runs' steps in order, one run at a time, keeping the stacks of all runs so far
// per thread (a frame's step an index into `steps`).
class RunJoiner {
 public:
  RunJoiner(std::vector<StepSummary>& steps, long long last_time)
      : steps_(steps), last_time_(last_time) {}

  void join(ChunkScan& chunk, const std::vector<std::string>& names) {
    // Ranges never closed last until the last event, as nvtxppsum counts them.
    for (const auto& [key, start] : chunk.open_ranges) {
      chunk.durations->add(key, last_time_ - start);
    }
    adopt_orphans(chunk, names);
    const std::size_t first_step = steps_.size();
    append_steps(chunk, names);
    for (const auto& [tid, frames] : chunk.stacks) {
      std::vector<Frame>& below = stacks_[tid];
      for (const Frame& frame : frames) {
        below.push_back(
            {frame.end, frame.step < 0 ? -1 : static_cast<int>(first_step) + frame.step});
      }
    }
  }

 private:
  // This run's orphans under the steps earlier runs left open, nested as in one pass: the
  // frames they end after close first.
  void adopt_orphans(const ChunkScan& chunk, const std::vector<std::string>& names) {
    std::map<std::size_t, StepFound> adopted;
    chunk.orphans->for_each([&](const Orphan& orphan) {
      std::vector<Frame>& frames = stacks_[orphan.tid];
      while (!frames.empty() && frames.back().end < orphan.end) frames.pop_back();
      if (orphan.step || frames.empty() || frames.back().step < 0) return;
      adopted[static_cast<std::size_t>(frames.back().step)].add_range(orphan.key, orphan.start,
                                                                      orphan.end);
    });
    for (const auto& [index, found] : adopted) {
      add_shares(steps_[index].shares, found, names, last_time_);
    }
  }

  void append_steps(const ChunkScan& chunk, const std::vector<std::string>& names) {
    for (const StepFound& found : chunk.steps) {
      StepSummary step;
      step.step = found.step;
      if (found.tid) step.global_pid = *found.tid & kProcessOfTid;
      step.start_ns = found.start;
      step.end_ns = found.end.value_or(last_time_);
      step.cut = !found.end.has_value();
      add_shares(step.shares, found, names, last_time_);
      steps_.push_back(std::move(step));
    }
  }

  std::vector<StepSummary>& steps_;
  const long long last_time_;
  std::unordered_map<long long, std::vector<Frame>> stacks_;
};

// The step's own order: forward, backward, optimizer; "data copy in 5" of step 5 is
// "data copy in {n}", one range across steps.
void group_shares_by_name(std::vector<StepSummary>& steps) {
  for (StepSummary& step : steps) {
    std::vector<RangeShare> grouped;
    for (RangeShare& share : step.shares) {
      add_share(grouped, name_with_step_place(share.range, step.step), share.ns,
                share.first_start_ns);
    }
    step.shares = std::move(grouped);
    std::stable_sort(step.shares.begin(), step.shares.end(),
                     [](const RangeShare& a, const RangeShare& b) {
                       return a.first_start_ns < b.first_start_ns;
                     });
  }
}

}  // namespace

// Reads NVTX_EVENTS in up to `threads` runs of rows at once, then joins them in order:
// durations merge, steps follow one another, and the ranges each later run left without a
// parent find it in the stacks the earlier runs left open.
std::optional<NvtxSummary> summarize_nvtx(const fs::path& file, const Database& db,
                                          const SummaryOptions& options, bool sorted) {
  const std::set<std::string> columns = db.columns("NVTX_EVENTS");
  for (const char* needed : {"start", "end", "eventType"}) {
    if (!columns.count(needed)) return NvtxSummary{};  // not a form we know: no NVTX data
  }
  std::vector<ChunkScan> chunks =
      scan_chunks(file, table_runs(db, options, sorted), sorted, options.step_name);
  if (!in_start_order(file, chunks, sorted)) return std::nullopt;

  const long long last_time = capture_end(chunks);
  const std::vector<std::vector<std::string>> names = key_names(chunks);
  NvtxSummary out;
  RunJoiner joiner(out.steps, last_time);
  for (std::size_t c = 0; c < chunks.size(); ++c) joiner.join(chunks[c], names[c]);
  group_shares_by_name(out.steps);
  std::vector<std::pair<GroupedDurations*, const std::vector<std::string>*>> parts;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    parts.emplace_back(chunks[c].durations.get(), &names[c]);
  }
  out.rows = summary_rows(parts, SIZE_MAX);
  return out;
}

}  // namespace nsel::analyze
