// What one profiled process did, read from the SQLite export of its report: the duration of
// each step, the NVTX range summary (the columns of `nsys stats -r nvtxppsum`), the share of
// each step spent in its top-level ranges, CUDA kernels and GPU busy time per step when the
// report has GPU data, and the OS runtime summary.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/reports/report_identity.hpp"

namespace nsel {

// Count, total, mean, median, min, max and sample standard deviation of a set of durations (ns),
// computed exactly as `nsys stats` does (median of an even count: mean of the two middle ones).
struct DurationStats {
  long long count = 0;
  long long total = 0;
  double mean = 0;
  double median = 0;
  long long min = 0;
  long long max = 0;
  double stddev = 0;
};

// One row of a summary table, sorted by total time, largest first.
struct SummaryRow {
  std::string name;
  double time_percent = 0;  // of the table's total, rounded to 0.1 as nsys does
  DurationStats stats;
};

// SQLite's round(x, digits): halves away from zero, as the numbers `nsys stats` prints.
double round_like_sqlite(double value, int digits);

// Names of step ranges: a pattern with one "{n}" where the step number goes ("step {n}").
class StepNamePattern {
 public:
  // Throws nsel::Error naming `source` unless `pattern` holds "{n}" exactly once.
  explicit StepNamePattern(std::string_view pattern, std::string_view source = "--step-name");
  StepNamePattern() : StepNamePattern("step {n}") {}
  // The step number a range name stands for, or nullopt.
  std::optional<long long> match(std::string_view name) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::string prefix_;
  std::string suffix_;
};

// One row of the kernel summary, as `nsys stats -r gpukernsum` (2022.4) and `cuda_gpu_kern_gb_sum`
// (2023.4) give it: one row per full kernel name, grid and block.
struct KernelRow {
  std::string name;            // the full (demangled) name; the short name with short_kernel_names
  std::string grid;            // "x y z", as the GridXYZ column without its padding
  std::string block;           // "x y z", as BlockXYZ
  bool communication = false;  // a collective or point-to-point kernel (NCCL and the like)
  double time_percent = 0;     // of all kernels' total, rounded to 0.1 as nsys does
  DurationStats stats;
};

// A kernel of a collective or point-to-point communication library: its name (a leading "void "
// and namespaces aside) begins with "nccl" (NCCL: ncclKernel_*, ncclDevKernel_*), "rccl" (AMD's
// RCCL) or "msccl" (MSCCL, MSCCL++), in any case.
bool is_communication_kernel(std::string_view name);

struct RangeShare {
  // A top-level range inside the step (a direct child on the step's thread). A name that carries
  // the step's own number is grouped under its pattern: "data copy in 5" in step 5 is
  // "data copy in {n}".
  std::string range;
  long long ns = 0;
  long long first_start_ns = 0;  // when it first began in the step
};

struct StepSummary {
  long long step = 0;
  long long start_ns = 0;
  long long end_ns = 0;
  long long duration_ns() const { return end_ns - start_ns; }
  // Cut by the end of capture: its range was never closed (end_ns is then the report's last NVTX
  // time), so its length is not the step's. Left out of step statistics.
  bool cut = false;
  std::vector<RangeShare> shares;  // largest first
  // When the report has GPU activity: the union of kernel, memcpy and memset intervals inside
  // the step, on the devices of the process whose steps these are; idle is the rest of the step.
  std::optional<long long> gpu_busy_ns;
  std::optional<long long> gpu_idle_ns() const {
    if (!gpu_busy_ns) return std::nullopt;
    return duration_ns() - *gpu_busy_ns;
  }
  // Of the busy time: the union of communication kernels' intervals (is_communication_kernel)
  // inside the step, and the rest of the busy time: every other kernel, copy and set where no
  // communication kernel runs at the same time. communication + compute = busy.
  std::optional<long long> communication_ns;
  std::optional<long long> compute_ns;
  // The process of the thread that pushed the step range (its globalTid's process part, as the
  // globalPid of GPU activity), when the export has threads.
  std::optional<long long> global_pid;
};

struct SummaryOptions {
  StepNamePattern step_name;
  std::size_t top_kernels = 10;
  bool short_kernel_names = false;  // group kernels by short name (and grid, block) instead
  // A large NVTX table is read in this many runs of rows at once (at most 4), each by a thread.
  unsigned threads = 1;
};

struct ProcessSummary {
  ReportIdentity identity;  // who the report is of (identify_report); not set by summarize_export
  std::filesystem::path report;       // the .nsys-rep (or the .sqlite given)
  std::filesystem::path export_file;  // the SQLite export read
  bool has_nvtx = false;              // the export has the table (a missing table is no data)
  bool has_gpu = false;
  bool has_osrt = false;
  std::vector<StepSummary> steps;  // time order
  std::vector<SummaryRow> nvtx;    // every push/pop range name, as nvtxppsum
  std::vector<KernelRow> kernels;  // the top kernel rows by total time
  long long kernel_names = 0;      // distinct kernel rows (name, grid, block) before the top cut
  std::vector<SummaryRow> osrt;    // OS runtime functions, as osrtsum
  // How the report was read that a reader should know (ExportResult::notes); one line each.
  std::vector<std::string> notes;
};

// When a report holds steps but none of them holds a range inside it: the one line that says so
// and names the likely cause (nullopt otherwise). Ranges made with the `nvtx` package 0.2.17 from
// the Python package index are recorded by neither Nsight Systems generation here (0.2.11's are).
std::optional<std::string> steps_without_ranges(const ProcessSummary& process);

// Reads one export. Throws nsel::Error (exit code 1) naming the file when it is not a SQLite
// export; tables that are missing mean no data of that kind.
ProcessSummary summarize_export(const std::filesystem::path& sqlite_export,
                                const SummaryOptions& options);

}  // namespace nsel
