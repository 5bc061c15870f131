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

// The rows of NVTX_EVENTS with rowid in [first, last] (all when first < 0). Ranges are nested
// within the run alone; a run after the first notes the ranges left without a parent there, as
// their parents, if any, are in earlier runs (see Orphan).
void scan_chunk(const fs::path& file, long long first, long long last, bool after_first,
                bool sorted, const StepNamePattern& step_name, ChunkScan& scan) {
  const Database db(file);
  Strings strings(db);
  const std::set<std::string> columns = db.columns("NVTX_EVENTS");
  std::unordered_map<long long, std::uint32_t> text_of_id;
  std::unordered_map<std::string, std::uint32_t, TextHash, std::equal_to<>> text_of_string;
  std::unordered_map<TextKey, std::uint32_t, TextKeyHash> key_of;
  std::vector<std::optional<long long>> step_of_key;
  std::vector<Frame>* stack = nullptr;  // the last row's thread's
  long long stack_tid = 0;
  // The last push/pop row of each thread (RowOrder's start is LLONG_MIN before the first).
  std::unordered_map<long long, RowOrder> last_of_thread;
  RowOrder* thread_last = nullptr;  // the last row's thread's

  std::uint32_t last_text_index = UINT32_MAX;
  const auto text_index = [&](const RowValues& r) -> std::uint32_t {
    if (!r.is_null(3)) {
      const long long id = r.integer(3);
      const auto found = text_of_id.find(id);
      if (found != text_of_id.end()) return found->second;
      const auto index = static_cast<std::uint32_t>(scan.texts.size());
      scan.texts.push_back(strings.get(id).value_or(""));
      text_of_id.emplace(id, index);
      return index;
    }
    const std::string_view text = r.text(6);
    // Runs of the same name are common (a loop of small ranges): skip the hash then.
    if (last_text_index < scan.texts.size() && scan.texts[last_text_index] == text) {
      return last_text_index;
    }
    const auto found = text_of_string.find(text);
    if (found != text_of_string.end()) return last_text_index = found->second;
    const auto index = static_cast<std::uint32_t>(scan.texts.size());
    scan.texts.push_back(valid_utf8(text));
    text_of_string.emplace(std::string(text), index);
    return last_text_index = index;
  };
  TextKey last_text_key{0, 0, 0};  // the last row's key: runs of one name skip the hash
  std::uint32_t last_key = UINT32_MAX;
  const auto key_of_row = [&](const RowValues& rows, long long pid) {
    const std::uint32_t text = text_index(rows);
    const long long domain = rows.integer_or(4, -1);
    const TextKey text_key{domain, pid, text};
    if (!(text_key == last_text_key) || last_key == UINT32_MAX) {
      const auto [it, inserted] =
          key_of.try_emplace(text_key, static_cast<std::uint32_t>(scan.keys.size()));
      if (inserted) {
        scan.keys.push_back({domain, pid, text});
        step_of_key.push_back(step_name.match(scan.texts[text]));
      }
      last_text_key = text_key;
      last_key = it->second;
    }
    return last_key;
  };
  // Plain columns (expressions cost SQLite more than a type check costs here).
  const std::vector<std::string> values = {"start",
                                           "end",
                                           "eventType",
                                           column_or_null(columns, "textId"),
                                           column_or_null(columns, "domainId"),
                                           column_or_null(columns, "globalTid"),
                                           column_or_null(columns, "text")};

  const auto row = [&](const RowValues& rows) {
    // Every value is checked (type, range, end not before start): the sorted re-read and the
    // sums below rely on whole numbers within kLatestTime.
    const long long start = rows.time(0);
    const bool open = rows.is_null(1);
    const long long end = open ? LLONG_MAX : rows.end_time(1, start);
    const long long type = rows.integer_or(2, 0);
    scan.last_time = std::max(scan.last_time, open ? start : end);
    const long long tid = rows.integer_or(5, 0);
    const RowOrder order{start, end, rows.is_null(5) ? LLONG_MIN : tid,
                         rows.integer_or(3, LLONG_MIN)};
    // Rows in start order; ties in RowOrder's order only on one thread, where they nest.
    if (!scan.any) {
      scan.first_row = order;
      scan.any = true;
    } else if (start < scan.last_row.start) {
      throw OutOfOrder();
    }
    scan.last_row = order;
    const long long pid = tid & kPidBits;
    if (type == kNvtxDomainCreate) {
      // The earliest creation names the domain, as nvtxppsum takes it.
      scan.domains.try_emplace({rows.integer_or(4, -1), pid}, start, valid_utf8(rows.text(6)));
      return;
    }
    const bool push_pop = type == kNvtxPushPopRange || type == kNvtxtPushPopRange;
    if (!push_pop && type != kNvtxStartEndRange) return;
    const std::uint32_t key = key_of_row(rows, pid);

    int step_index = -1;
    if (step_of_key[key]) {
      step_index = static_cast<int>(scan.steps.size());
      scan.steps.push_back({*step_of_key[key],
                            rows.is_null(5) ? std::nullopt : std::optional(tid),
                            start,
                            open ? std::nullopt : std::optional(end),
                            {},
                            {}});
    }
    if (!push_pop) return;  // start/end ranges: steps only, as nvtxppsum leaves them out

    if (open) {
      scan.open_ranges.emplace_back(key, start);
    } else {
      scan.durations->add(key, end - start);
    }
    // Push/pop ranges nest per thread: the parent is the innermost range still running.
    if (stack == nullptr || tid != stack_tid) {
      stack = &scan.stacks[tid];
      thread_last = &last_of_thread[tid];
      stack_tid = tid;
    }
    if (thread_last->start == start && !(*thread_last <= order)) throw OutOfOrder();
    *thread_last = order;
    while (!stack->empty() && stack->back().end < end) stack->pop_back();
    if (stack->empty()) {
      if (after_first) scan.orphans->push_back({tid, start, end, key, step_index >= 0});
    } else if (step_index < 0 && stack->back().step >= 0) {
      StepFound& step = scan.steps[static_cast<std::size_t>(stack->back().step)];
      if (open) {
        step.open_shares.emplace_back(key, start);
      } else {
        long long& ns = step.shares.try_emplace(key, 0, start).first->second.first;
        ns = add_ns(ns, end - start);
      }
    }
    stack->push_back({end, step_index});
  };

  try {
    db.scan("NVTX_EVENTS" + (first >= 0 ? " WHERE rowid BETWEEN " + std::to_string(first) +
                                              " AND " + std::to_string(last)
                                        : std::string()),
            values, sorted ? row_order_sql(values[5], values[3]) : "", row);
  } catch (const OutOfOrder&) {
    scan.out_of_order = true;
  }
}

// `name` with the step's own number, where it stands alone (not inside a longer number), put as
// "{n}": the last such place, as step numbers end names ("data copy in 5").
std::string step_grouped_name(const std::string& name, long long step) {
  const std::string number = std::to_string(step);
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (std::size_t at = name.rfind(number); at != std::string::npos;
       at = at == 0 ? std::string::npos : name.rfind(number, at - 1)) {
    const std::size_t after = at + number.size();
    if ((at > 0 && digit(name[at - 1])) || (after < name.size() && digit(name[after]))) continue;
    return name.substr(0, at) + "{n}" + name.substr(after);
  }
  return name;
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

// Reads NVTX_EVENTS in up to `threads` runs of rows at once, then joins them in order:
// durations merge, steps follow one another, and the ranges each later run left without a
// parent find it in the stacks the earlier runs left open.
}  // namespace

std::optional<NvtxSummary> summarize_nvtx(const fs::path& file, const Database& db,
                                          const SummaryOptions& options, bool sorted) {
  const std::set<std::string> columns = db.columns("NVTX_EVENTS");
  for (const char* needed : {"start", "end", "eventType"}) {
    if (!columns.count(needed)) return NvtxSummary{};  // not a form we know: no NVTX data
  }
  std::vector<std::pair<long long, long long>> runs = {{-1, -1}};
  if (!sorted && options.threads > 1) {
    // One query each: SQLite reads min() or max() of the rowid off the b-tree only when it is
    // the query's only aggregate; together they cost a scan of the whole table.
    // A table without rowids (none known so far) is read in one run rather than failing.
    try {
      Statement lowest = db.prepare("SELECT min(rowid) FROM NVTX_EVENTS");
      Statement highest = db.prepare("SELECT max(rowid) FROM NVTX_EVENTS");
      if (lowest.step() && !lowest.is_null(0) && highest.step()) {
        runs = row_runs(lowest.integer(0), highest.integer(0), options.threads);
      }
    } catch (const Error&) {
      runs = {{-1, -1}};
    }
  }
  std::vector<ChunkScan> chunks(runs.size());
  std::vector<std::exception_ptr> errors(runs.size());
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < runs.size(); ++c) {
    const auto work = [&, c] {
      try {
        scan_chunk(file, runs[c].first, runs[c].second, c > 0, sorted, options.step_name,
                   chunks[c]);
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
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const bool unordered =
        chunks[c].out_of_order || (c > 0 && chunks[c].any && chunks[c - 1].any &&
                                   chunks[c].first_row.start < chunks[c - 1].last_row.start);
    if (!unordered) continue;
    // SQLite's order of checked whole numbers is ours: never seen, but never a crash either.
    if (sorted) {
      throw Error(quote(file.string()) +
                      ": not a readable Nsight Systems export: NVTX_EVENTS rows cannot be put "
                      "in start order",
                  1);
    }
    return std::nullopt;
  }

  // Names: "<domain>:<text>" for ranges of a named domain, else the text, as nvtxppsum.
  std::map<std::pair<long long, long long>, std::pair<long long, std::string>> domains;
  long long last_time = 0;
  for (const ChunkScan& chunk : chunks) {
    last_time = std::max(last_time, chunk.last_time);
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

  NvtxSummary out;
  // The stacks of all runs so far, per thread; a frame's step is an index into out.steps.
  std::unordered_map<long long, std::vector<Frame>> stacks;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    ChunkScan& chunk = chunks[c];
    // Ranges never closed last until the last event, as nvtxppsum counts them.
    for (const auto& [key, start] : chunk.open_ranges) chunk.durations->add(key, last_time - start);
    // This run's orphans under the steps earlier runs left open, nested as in one pass: the
    // frames they end after close first.
    std::map<std::size_t, StepFound> adopted;
    chunk.orphans->for_each([&](const Orphan& orphan) {
      std::vector<Frame>& frames = stacks[orphan.tid];
      while (!frames.empty() && frames.back().end < orphan.end) frames.pop_back();
      if (orphan.step || frames.empty() || frames.back().step < 0) return;
      StepFound& step = adopted[static_cast<std::size_t>(frames.back().step)];
      if (orphan.end == LLONG_MAX) {
        step.open_shares.emplace_back(orphan.key, orphan.start);
      } else {
        long long& ns = step.shares.try_emplace(orphan.key, 0, orphan.start).first->second.first;
        ns = add_ns(ns, orphan.end - orphan.start);
      }
    });
    for (const auto& [index, found] : adopted) {
      add_shares(out.steps[index].shares, found, names[c], last_time);
    }
    const std::size_t first_step = out.steps.size();
    for (const StepFound& found : chunk.steps) {
      StepSummary step;
      step.step = found.step;
      if (found.tid) step.global_pid = *found.tid & kProcessOfTid;
      step.start_ns = found.start;
      step.end_ns = found.end.value_or(last_time);
      step.cut = !found.end.has_value();
      add_shares(step.shares, found, names[c], last_time);
      out.steps.push_back(std::move(step));
    }
    for (const auto& [tid, frames] : chunk.stacks) {
      std::vector<Frame>& below = stacks[tid];
      for (const Frame& frame : frames) {
        below.push_back(
            {frame.end, frame.step < 0 ? -1 : static_cast<int>(first_step) + frame.step});
      }
    }
  }
  // The step's own order: forward, backward, optimizer; "data copy in 5" of step 5 is
  // "data copy in {n}", one range across steps.
  for (StepSummary& step : out.steps) {
    std::vector<RangeShare> grouped;
    for (RangeShare& share : step.shares) {
      add_share(grouped, step_grouped_name(share.range, step.step), share.ns, share.first_start_ns);
    }
    step.shares = std::move(grouped);
    std::stable_sort(step.shares.begin(), step.shares.end(),
                     [](const RangeShare& a, const RangeShare& b) {
                       return a.first_start_ns < b.first_start_ns;
                     });
  }
  std::vector<std::pair<GroupedDurations*, const std::vector<std::string>*>> parts;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    parts.emplace_back(chunks[c].durations.get(), &names[c]);
  }
  out.rows = summary_rows(parts, SIZE_MAX);
  return out;
}

}  // namespace nsel::analyze
