// SQLite exports are read by `nsel report` and `nsel diff` from wherever reports lie, and an
// export beside a report may be anyone's. The input is either a whole file (first byte even) or a
// little program (first byte odd) that fills the tables the summary reads with values of any
// type: NULL, whole numbers (the extremes too), reals, text (long text too) and blobs, in
// columns with or without INTEGER affinity. Whatever the file holds, the summary either succeeds
// with sane numbers, and then the diff and the renderers run on it, or fails with one line naming
// the file (exit code 1); it never crashes, and no other exception escapes.
#include <sqlite3.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "nsel/analyze/comparison.hpp"
#include "nsel/analyze/diff.hpp"
#include "nsel/analyze/summary.hpp"
#include "nsel/core/error.hpp"
#include "nsel/render/diff.hpp"
#include "nsel/render/report.hpp"

namespace {

// The tables and columns the summary reads (and a few it may meet).
struct Table {
  const char* name;
  std::vector<const char*> columns;
};
const std::vector<Table>& tables() {
  static const std::vector<Table> all = {
      {"StringIds", {"id", "value"}},
      {"NVTX_EVENTS", {"start", "end", "eventType", "textId", "domainId", "globalTid", "text"}},
      {"CUPTI_ACTIVITY_KIND_KERNEL",
       {"start", "end", "demangledName", "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY",
        "blockZ", "deviceId", "globalPid"}},
      {"CUPTI_ACTIVITY_KIND_MEMCPY", {"start", "end", "deviceId", "globalPid"}},
      {"CUPTI_ACTIVITY_KIND_MEMSET", {"start", "end", "deviceId", "globalPid"}},
      {"OSRT_API", {"start", "end", "nameId", "eventClass"}},
      {"EXPORT_META_DATA", {"name", "value"}},
  };
  return all;
}

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  long long number() {
    unsigned long long v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | byte();
    return static_cast<long long>(v);
  }
  std::string bytes(std::size_t n) {
    std::string out;
    while (n-- > 0 && !done()) out.push_back(static_cast<char>(byte()));
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// Values near the ones that matter: event types, step names, time limits, the extremes.
void bind_value(sqlite3_stmt* statement, int index, Reader& in) {
  static const long long interesting[] = {0,
                                          1,
                                          2,
                                          59,
                                          60,
                                          70,
                                          75,
                                          27,
                                          -1,
                                          LLONG_MAX,
                                          LLONG_MIN,
                                          1LL << 61,
                                          (1LL << 61) + 1,
                                          -(1LL << 61),
                                          1LL << 62,
                                          0x0000000001000000LL,
                                          0x0000000102000003LL};
  static const char* texts[] = {"step 1",
                                "step 2",
                                "step 3",
                                "forward",
                                "backward",
                                "ncclKernel_AllReduce",
                                "void gemm<float>(int)",
                                "abc",
                                ""};
  const std::uint8_t tag = in.byte();
  if (tag == 255) {
    // A text past the summary's limit on names (1 MiB): rarely, as it is slow to write.
    const std::string huge((std::size_t{1} << 20) + 1 + in.byte(), 'x');
    sqlite3_bind_text(statement, index, huge.data(), static_cast<int>(huge.size()),
                      SQLITE_TRANSIENT);
    return;
  }
  switch (tag % 8) {
    case 0:
      sqlite3_bind_null(statement, index);
      break;
    case 1:
      sqlite3_bind_int64(statement, index, tag / 8);  // small numbers, often
      break;
    case 2:
      sqlite3_bind_int64(statement, index, in.number());
      break;
    case 3:
      sqlite3_bind_int64(statement, index,
                         interesting[in.byte() % (sizeof interesting / sizeof *interesting)]);
      break;
    case 4:
      sqlite3_bind_double(statement, index, static_cast<double>(in.number()) / 7.0);
      break;
    case 5:
      sqlite3_bind_text(statement, index, texts[in.byte() % (sizeof texts / sizeof *texts)], -1,
                        SQLITE_STATIC);
      break;
    case 6: {
      const std::string text = in.bytes(in.byte());
      sqlite3_bind_text(statement, index, text.data(), static_cast<int>(text.size()),
                        SQLITE_TRANSIENT);
      break;
    }
    default: {
      const std::string blob = in.bytes(in.byte() % 16);
      sqlite3_bind_blob(statement, index, blob.data(), static_cast<int>(blob.size()),
                        SQLITE_TRANSIENT);
      break;
    }
  }
}

bool execute(sqlite3* db, const std::string& sql) {
  return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
}

// Builds the export the program in `in` describes: which tables exist (with or without
// INTEGER affinity), then rows of values.
void write_export(const std::filesystem::path& file, Reader& in) {
  sqlite3* db = nullptr;
  if (sqlite3_open(file.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return;
  }
  execute(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN");
  const std::uint8_t present = in.byte();
  const std::uint8_t typed = in.byte();
  std::vector<sqlite3_stmt*> inserts;
  for (std::size_t t = 0; t < tables().size(); ++t) {
    sqlite3_stmt* insert = nullptr;
    if (present & (1u << t)) {
      std::string create = std::string("CREATE TABLE ") + tables()[t].name + " (";
      std::string values;
      for (const char* column : tables()[t].columns) {
        create += std::string(values.empty() ? "" : ", ") + column +
                  (typed & (1u << t) ? " INTEGER" : "");
        values += values.empty() ? "?" : ", ?";
      }
      execute(db, create + ")");
      sqlite3_prepare_v2(
          db, (std::string("INSERT INTO ") + tables()[t].name + " VALUES (" + values + ")").c_str(),
          -1, &insert, nullptr);
    }
    inserts.push_back(insert);
  }
  for (int rows = 0; rows < 64 && !in.done(); ++rows) {
    const std::size_t t = in.byte() % tables().size();
    if (inserts[t] == nullptr) continue;
    for (std::size_t c = 0; c < tables()[t].columns.size(); ++c) {
      bind_value(inserts[t], static_cast<int>(c) + 1, in);
    }
    sqlite3_step(inserts[t]);
    sqlite3_reset(inserts[t]);
  }
  for (sqlite3_stmt* insert : inserts) sqlite3_finalize(insert);
  execute(db, "COMMIT");
  sqlite3_close(db);
}

// What a summary that succeeded must hold, whatever the export.
void check_summary(const nsel::ProcessSummary& summary) {
  for (const nsel::StepSummary& step : summary.steps) {
    NSEL_FUZZ_CHECK(step.duration_ns() >= 0);
    for (const nsel::RangeShare& share : step.shares) NSEL_FUZZ_CHECK(share.ns >= 0);
    if (step.gpu_busy_ns) {
      NSEL_FUZZ_CHECK(*step.gpu_busy_ns >= 0 && *step.gpu_busy_ns <= step.duration_ns());
      NSEL_FUZZ_CHECK(*step.communication_ns + *step.compute_ns == *step.gpu_busy_ns);
    }
  }
  for (const auto* rows : {&summary.nvtx, &summary.osrt}) {
    for (const nsel::SummaryRow& row : *rows) {
      NSEL_FUZZ_CHECK(row.stats.count > 0 && row.stats.min >= 0);
      NSEL_FUZZ_CHECK(row.stats.min <= row.stats.max && row.stats.total >= row.stats.max);
    }
  }
  for (const nsel::KernelRow& row : summary.kernels) {
    NSEL_FUZZ_CHECK(row.stats.count > 0 && row.stats.min >= 0);
    NSEL_FUZZ_CHECK(row.stats.min <= row.stats.max && row.stats.total >= row.stats.max);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  static const fs::path file =
      fs::temp_directory_path() / ("nsel-fuzz-export-" + std::to_string(::getpid()) + ".sqlite");
  fs::remove(file);
  Reader in(data, size);
  if (size == 0 || data[0] % 2 == 0) {
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(data) + (size ? 1 : 0),
               static_cast<std::streamsize>(size ? size - 1 : 0));
  } else {
    in.byte();
    write_export(file, in);
  }
  nsel::SummaryOptions options;
  options.top_kernels = 1000;
  std::vector<nsel::ProcessSummary> summaries;
  for (bool short_names : {false, true}) {
    options.short_kernel_names = short_names;
    try {
      summaries.push_back(nsel::summarize_export(file, options));
    } catch (const nsel::Error& e) {
      const std::string_view message = e.what();
      NSEL_FUZZ_CHECK(e.exit_code() == 1);
      NSEL_FUZZ_CHECK(message.find('\n') == std::string_view::npos);
      NSEL_FUZZ_CHECK(message.starts_with(nsel::quote(file.string()) + ": "));
      fs::remove(file);
      return 0;
    }
    check_summary(summaries.back());
  }
  fs::remove(file);
  nsel::ReportSet baseline;
  baseline.processes.push_back(summaries[0]);
  baseline.comparison = nsel::compare_steps(baseline.processes, 10);
  nsel::ReportSet candidate;
  candidate.processes.push_back(summaries[1]);
  candidate.comparison = nsel::compare_steps(candidate.processes, 10);
  const nsel::RunDiff diff = nsel::diff_runs(baseline, candidate, nsel::DiffOptions{});
  (void)nsel::render_text(baseline);
  (void)nsel::render_diff_text(diff);
  (void)nsel::render_diff_json(diff).dump();
  return 0;
}
