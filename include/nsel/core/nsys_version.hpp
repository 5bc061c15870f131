// Nsight Systems versions, and the one place that decides what depends on them: the names of
// `nsys stats` reports, export options, which of nsel's workarounds a version needs, which nsys
// can read a report or import a .qdstrm, and which installed nsys is chosen for a file.
// Pure: the versions come from `nsys --version` (sys) and from the files' first bytes (reports).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nsel {

struct NsysVersion {
  int year = 0;      // 2022
  int release = 0;   // 4
  int patch = 0;     // 2
  int build = 0;     // 1 (0 when not given)
  std::string text;  // as written: "2022.4.2.1-df9881f", "2023.4.4.54-234433681190v0"
  std::string release_text() const;  // "2022.4.2"
};

// -1, 0 or 1 by year, release, patch and build (the text after them is not compared).
int compare_versions(const NsysVersion& a, const NsysVersion& b);
// Same year, release and patch: what a .qdstrm's importer must match.
bool same_release(const NsysVersion& a, const NsysVersion& b);

// The version in `text`: the output of `nsys --version` ("NVIDIA Nsight Systems version
// 2022.4.2.1-df9881f"), a bare version ("2023.2.3.1001-32894139v0", "2023.4.4") or a report
// header's "2023@4@4@54-234433681190v0". nullopt when there is none.
std::optional<NsysVersion> parse_nsys_version(std::string_view text);
// The version `text` starts with (no search), or nullopt.
std::optional<NsysVersion> nsys_version_prefix(std::string_view text);

// Everything nsel does differently by version. Where only 2022.4 (Debian 12) and 2023.4
// (Debian 13) were measured, the newer behaviour starts at 2023.4 and older versions get
// 2022.4's, which 2023.4 also accepts (it still answers the old stats report names).
struct NsysBehaviour {
  // `nsys stats -r` names of the reports nsel's summary equals.
  std::string nvtx_pushpop_report;  // nvtxppsum | nvtx_pushpop_sum
  std::string kernel_report;        // gpukernsum | cuda_gpu_kern_sum
  std::string kernel_grid_report;   // "" | cuda_gpu_kern_gb_sum (kernels by grid and block)
  std::string osrt_report;          // osrtsum | osrt_sum
  // `nsys export` and `nsys stats` take `--quiet true` in both (a bare -q is an error in both).
  std::vector<std::string> quiet_options;
  bool export_tables = false;         // `nsys export --tables=PATTERN,...` exists
  std::string export_metadata_table;  // EXPORT_META_DATA (schema 3.0.0) | META_DATA_EXPORT
  // nsel's workarounds, each true only where it was measured to be needed (docs/nsys-facts.md):
  // with CPU context-switch tracing on, a session's agent can spin for good at its end.
  bool context_switch_hang = false;
  // A program stopped by a signal while its NVTX capture range is open loses the range's NVTX
  // events (the injection hands them over only after the range ends, 2023.4 taking up to about
  // 1 s; 2022.4 lost some too): the step library then ends the range and waits
  // (kStepStopHandoverVariable).
  bool stop_collection_before_signal = false;
  // Sessions of two PID namespaces (containers) at once on one machine: the second fails before
  // its program starts ("Agent launcher failed", 2022.4; 2023.4 runs both): `nsel exec` then
  // refuses the second (nsys_pid_namespace_claim).
  bool one_pid_namespace_at_a_time = false;
  // nsys matches only registered NVTX strings for a capture range unless this is "0" (both).
  bool nvtx_register_only_off = true;
};
NsysBehaviour nsys_behaviour(const NsysVersion& version);

// Both metadata table names an nsys export may have; a .sqlite without either is no (complete)
// export.
inline constexpr std::string_view kExportMetadataTables[] = {"EXPORT_META_DATA",
                                                             "META_DATA_EXPORT"};

// An nsys reads reports written by versions up to its own (2023.4 read 2020.5 to 2023.4 here
// and refused 2026.1; 2022.4 refused 2023.2 and 2023.4).
bool can_read_report(const NsysVersion& reader, const NsysVersion& writer);
// A .qdstrm needs the importer of the version that wrote it (2023.4's failed on 2022.4's).
bool can_import_qdstrm(const NsysVersion& importer, const NsysVersion& writer);

// An installed nsys, as the search found it.
struct NsysInstall {
  std::string path;  // as found (absolute)
  NsysVersion version;
  std::string origin;  // "NSEL_NSYS", "PATH" or "known location"
};

enum class NsysFileKind { report, qdstrm };

// The install to use for a file `writer` wrote, from `installs` in search order (NSEL_NSYS's
// entries, else PATH's nsys, then the known locations). The first one that can is taken when it
// is the first of the list (NSEL_NSYS's first entry or PATH's nsys: what the user chose);
// otherwise the oldest that can (its export schema is the nearest to the writer's). An unknown
// writer takes the first install. nullopt when none can.
std::optional<std::size_t> choose_nsys(const std::vector<NsysInstall>& installs,
                                       const std::optional<NsysVersion>& writer, NsysFileKind kind);

// The one line for a file no install can handle: which version wrote it, which were found
// (version and path), and the fix.
std::string no_nsys_for(std::string_view file, const NsysVersion& writer, NsysFileKind kind,
                        const std::vector<NsysInstall>& installs);

// "2022.4.2 (/usr/bin/nsys), 2023.4.4 (/opt/...)" or "none".
std::string describe_installs(const std::vector<NsysInstall>& installs);

}  // namespace nsel
