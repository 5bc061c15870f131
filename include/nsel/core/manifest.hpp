// The manifest nsel writes beside each report: who was profiled, where, how, and what came of
// it. Its text form is pure, so that `reports` reads manifests and tests and fuzzers drive it;
// writing them while a worker runs is `launch`'s ManifestRecorder.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nsel/core/step_window.hpp"

namespace nsel {

// Manifests are "<report stem>.nsel.json", beside "<report stem>.nsys-rep".
inline constexpr std::string_view kManifestSuffix = ".nsel.json";
// The export nsel makes of <stem>.nsys-rep holding only the tables it reads (where nsys can
// export chosen tables): <stem>.nsel.sqlite, a cache of the report, never a report of its own.
inline constexpr std::string_view kTablesExportSuffix = ".nsel.sqlite";
inline constexpr int kManifestVersion = 1;
// The most bytes of a manifest nsel reads (one is a few KiB): a larger file is not a manifest,
// never a worker name of hundreds of megabytes.
inline constexpr std::size_t kManifestReadCap = 1024 * 1024;

// The manifest's idea of the report, written by the launcher. `nsel ls` re-checks the files.
inline constexpr std::string_view kManifestRunning = "running";    // nsys has not exited yet
inline constexpr std::string_view kManifestComplete = "complete";  // .nsys-rep written
inline constexpr std::string_view kManifestQdstrm = "qdstrm";      // only a .qdstrm was left
inline constexpr std::string_view kManifestMissing = "missing";    // nsys wrote nothing
// The capture was lost for a cause nsel saw (`reason` tells more; `qdstrm` where nsys left it):
// the report's file system was full,
inline constexpr std::string_view kManifestDiskFull = "disk_full";
// the report's folder could not be written (read-only, removed, permissions),
inline constexpr std::string_view kManifestNotWritable = "not_writable";
// the report's name was taken by another file (an output name 'o' of the user's own),
inline constexpr std::string_view kManifestNameTaken = "name_taken";
// nsys did not finish within NSEL_STOP_TIMEOUT and was interrupted (and the program killed).
inline constexpr std::string_view kManifestStopTimeout = "stop_timeout";
// The program opened its capture (its step control told nsel so), yet nsys wrote no report: a
// failure of nsys itself (seen with 2022.4: "Connection to the Agent lost").
inline constexpr std::string_view kManifestNsysFailed = "nsys_failed";

// Every state a manifest may hold, in the order above.
inline constexpr std::string_view kManifestStates[] = {
    kManifestRunning,   kManifestComplete,    kManifestQdstrm,
    kManifestMissing,   kManifestDiskFull,    kManifestNotWritable,
    kManifestNameTaken, kManifestStopTimeout, kManifestNsysFailed};

struct Manifest {
  int version = kManifestVersion;
  std::string worker;
  std::optional<std::string> pattern;  // the pattern that selected the worker
  // The step window as the user wrote it ("2:4"), and its first start and last stop, so that
  // several windows ("2:4,10:12") fit the same fields.
  std::string step_window;
  long long step_start = 0;
  long long step_stop = 0;
  long long pid = 0;  // the profiled program's process id (the %p of the report name); 0 unknown
  long long nsel_pid = 0;  // the `nsel exec` that launched it
  std::string host;        // gethostname()
  std::string node_ip;     // see node_ip_address()
  // What tells from another PID namespace of the same host (a container that shares the host's
  // name) whether nsel_pid and pid still run: the inode of nsel's PID namespace and the kernel's
  // boot id (nullopt: not recorded, an older nsel).
  std::optional<unsigned long long> pid_namespace;
  std::optional<std::string> boot_id;
  std::map<std::string, std::string> rank_variables;  // only those present
  // Who nsel decided the process is, as `nsel exec` saw it: --rank/--local-rank/--node (the
  // Python API's rank=, local_rank=, node=) first, else RANK, LOCAL_RANK, ... (nullopt: unknown;
  // the node only when it was given, else the host name and SLURMD_NODENAME tell it).
  std::optional<long long> rank;
  std::optional<long long> local_rank;
  std::optional<std::string> node;
  std::vector<std::string> command;  // the full nsys command line, as argv
  std::string start_time;            // UTC, ISO 8601 with milliseconds
  std::optional<std::string> end_time;
  std::optional<int> exit_status;  // the program's exit code (128 + signal when killed)
  std::string report;              // the report's path as nsys was told to write it
  std::string state = std::string(kManifestRunning);
  std::string reason;  // why the state is what it is, when that is not obvious
  // Where nsys left the capture outside the report's folder when it could not write the report
  // (its .qdstrm in $TMPDIR, for `nsel recover`, or a whole nsys-report-<id>.nsys-rep there);
  // nullopt when it left nothing there.
  std::optional<std::string> qdstrm;

  bool operator==(const Manifest&) const = default;
};

// JSON text of `manifest`: fixed key order, two-space indent, a final newline.
std::string serialize_manifest(const Manifest& manifest);

// Parses manifest text. Throws nsel::Error (exit code 1) naming `source` on anything that is not
// a manifest of a version this nsel reads.
Manifest parse_manifest(std::string_view text, std::string_view source);

// The environment variables that tell a process's place in a distributed job (RANK, LOCAL_RANK,
// WORLD_SIZE, SLURM_*, OMPI_COMM_WORLD_*, PMI_RANK, PMIX_RANK, ...), in this order.
const std::vector<std::string_view>& rank_variable_names();

// The process's global rank: the manifest's own `rank`, else from its rank variables the first
// of RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, MV2_COMM_WORLD_RANK that holds
// a whole number (nullopt when none does).
std::optional<long long> manifest_rank(const Manifest& manifest);
// The same for the rank within the node (LOCAL_RANK, SLURM_LOCALID, ...).
std::optional<long long> manifest_local_rank(const Manifest& manifest);
// The node the process ran on: the one given to nsel (`node`), else as its scheduler names it:
// SLURMD_NODENAME when SLURM started it (what `srun -w` and squeue show; several nodes may share
// one host), else the host name.
std::string manifest_node(const Manifest& manifest);

// The manifest path for a report path: "x/<stem>.nsys-rep" -> "x/<stem>.nsel.json".
std::filesystem::path manifest_path_for(const std::filesystem::path& report);

// How many names a report may try when its own is taken: "<stem>.nsys-rep", then
// "<stem>-2.nsys-rep" ... "<stem>-99.nsys-rep".
inline constexpr int kReportNameVariants = 99;

// "<stem>-<k>.nsys-rep" for "<stem>.nsys-rep": the k-th name of a report whose own is taken
// (k = 1: its own name).
std::filesystem::path report_name_variant(const std::filesystem::path& report, int k);

// The files whose presence takes a report's name, so that no capture and no manifest is ever
// written over another's: the report, its .qdstrm and its manifest.
std::vector<std::filesystem::path> files_claiming_report_name(const std::filesystem::path& report);

}  // namespace nsel
