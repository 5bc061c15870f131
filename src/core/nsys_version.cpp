#include "nsel/core/nsys_version.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace nsel {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Reads digits at `at` into `value`; false when there are none or too many.
bool read_number(std::string_view text, std::size_t& at, int& value) {
  const std::size_t start = at;
  long long v = 0;
  while (at < text.size() && is_digit(text[at]) && at - start < 9) {
    v = v * 10 + (text[at] - '0');
    ++at;
  }
  if (at == start) return false;
  value = static_cast<int>(v);
  return true;
}

// The version starting at `at` (year.release[.patch[.build]][-suffix], '.' or '@' between).
std::optional<NsysVersion> version_at(std::string_view text, std::size_t at) {
  if (at + 6 > text.size() || text[at] != '2' || text[at + 1] != '0') return std::nullopt;
  if (at > 0 && (is_digit(text[at - 1]) || text[at - 1] == '.')) return std::nullopt;
  NsysVersion v;
  std::size_t i = at;
  if (!read_number(text, i, v.year) || i - at != 4 || i >= text.size()) return std::nullopt;
  const char separator = text[i];
  if (separator != '.' && separator != '@') return std::nullopt;
  int* parts[] = {&v.release, &v.patch, &v.build};
  int read = 0;
  for (int* part : parts) {
    if (i >= text.size() || text[i] != separator) break;
    std::size_t next = i + 1;
    if (!read_number(text, next, *part)) break;
    i = next;
    ++read;
  }
  if (read == 0 || v.release < 1 || v.release > 12) return std::nullopt;
  // A suffix: "-df9881f", "-234433681190v0".
  if (i < text.size() && text[i] == '-') {
    std::size_t end = i + 1;
    while (end < text.size() && std::isalnum(static_cast<unsigned char>(text[end]))) ++end;
    if (end > i + 1) i = end;
  }
  v.text = std::string(text.substr(at, i - at));
  std::replace(v.text.begin(), v.text.end(), '@', '.');
  return v;
}

}  // namespace

std::string NsysVersion::release_text() const {
  return std::to_string(year) + "." + std::to_string(release) + "." + std::to_string(patch);
}

int compare_versions(const NsysVersion& a, const NsysVersion& b) {
  const auto ka = std::tie(a.year, a.release, a.patch, a.build);
  const auto kb = std::tie(b.year, b.release, b.patch, b.build);
  return ka < kb ? -1 : (kb < ka ? 1 : 0);
}

bool same_release(const NsysVersion& a, const NsysVersion& b) {
  return a.year == b.year && a.release == b.release && a.patch == b.patch;
}

std::optional<NsysVersion> parse_nsys_version(std::string_view text) {
  // "version " first, so that `nsys --version`'s own number wins over any other in the text.
  const std::size_t marker = text.find("version ");
  if (marker != std::string_view::npos) {
    if (auto v = version_at(text, marker + 8)) return v;
  }
  for (std::size_t at = 0; at + 6 <= text.size(); ++at) {
    if (auto v = version_at(text, at)) return v;
  }
  return std::nullopt;
}

std::optional<NsysVersion> nsys_version_prefix(std::string_view text) {
  return version_at(text, 0);
}

NsysBehaviour nsys_behaviour(const NsysVersion& version) {
  NsysBehaviour b;
  const bool renamed = std::tie(version.year, version.release) >= std::make_tuple(2023, 4);
  b.nvtx_pushpop_report = renamed ? "nvtx_pushpop_sum" : "nvtxppsum";
  b.kernel_report = renamed ? "cuda_gpu_kern_sum" : "gpukernsum";
  b.kernel_grid_report = renamed ? "cuda_gpu_kern_gb_sum" : "";
  b.osrt_report = renamed ? "osrt_sum" : "osrtsum";
  b.quiet_options = {"--quiet", "true"};
  b.export_tables = renamed;
  b.export_metadata_table = renamed ? "META_DATA_EXPORT" : "EXPORT_META_DATA";
  // Measured with bench/nsys_workarounds.sh (docs/nsys-facts.md): 2022.4 hung, 2023.4 did not.
  b.context_switch_hang = !renamed;
  b.nvtx_register_only_off = true;
  // Measured with tests/e2e/launch_signal_test.cpp (docs/nsys-facts.md, "Stopping"): 2023.4
  // lost reports in most runs without it, 2022.4 in some (12 of 20 once, under load).
  b.stop_collection_before_signal = true;
  // Measured by hand (docs/nsys-facts.md, "PID namespaces"): 2022.4 failed, 2023.4 did not.
  b.one_pid_namespace_at_a_time = !renamed;
  return b;
}

bool can_read_report(const NsysVersion& reader, const NsysVersion& writer) {
  return std::tie(writer.year, writer.release, writer.patch) <=
         std::tie(reader.year, reader.release, reader.patch);
}

bool can_import_qdstrm(const NsysVersion& importer, const NsysVersion& writer) {
  return same_release(importer, writer);
}

std::optional<std::size_t> choose_nsys(const std::vector<NsysInstall>& installs,
                                       const std::optional<NsysVersion>& writer,
                                       NsysFileKind kind) {
  if (installs.empty()) return std::nullopt;
  if (!writer) return 0;
  const auto can = [&](const NsysInstall& i) {
    return kind == NsysFileKind::report ? can_read_report(i.version, *writer)
                                        : can_import_qdstrm(i.version, *writer);
  };
  if (can(installs.front())) return 0;
  std::optional<std::size_t> oldest;
  for (std::size_t i = 1; i < installs.size(); ++i) {
    if (!can(installs[i])) continue;
    if (!oldest || compare_versions(installs[i].version, installs[*oldest].version) < 0) oldest = i;
  }
  return oldest;
}

std::string describe_installs(const std::vector<NsysInstall>& installs) {
  if (installs.empty()) return "none";
  std::string text;
  for (const NsysInstall& i : installs) {
    if (!text.empty()) text += ", ";
    text += i.version.release_text() + " (" + i.path + ")";
  }
  return text;
}

std::string no_nsys_for(std::string_view file, const NsysVersion& writer, NsysFileKind kind,
                        const std::vector<NsysInstall>& installs) {
  const std::string needs = kind == NsysFileKind::report
                                ? "needs Nsight Systems " + writer.release_text() + " or newer"
                                : "needs the importer of Nsight Systems " + writer.release_text();
  return std::string(file) + ": written by Nsight Systems " + writer.text + ", " + needs +
         "; found: " + describe_installs(installs) +
         "; install such a version and set NSEL_NSYS=<its nsys> (a path, or several separated "
         "by ':')";
}

}  // namespace nsel
