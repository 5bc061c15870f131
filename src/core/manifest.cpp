// The manifest's text form: pure (no files, no processes), so tests and fuzzers can drive it.
#include <array>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>

#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/core/rank_selection.hpp"
#include "nsel/core/values.hpp"

namespace nsel {
namespace fs = std::filesystem;

fs::path report_name_variant(const fs::path& report, int k) {
  if (k <= 1) return report;
  std::string stem = report.filename().string();
  constexpr std::string_view suffix = ".nsys-rep";
  if (stem.ends_with(suffix)) stem.resize(stem.size() - suffix.size());
  return report.parent_path() / (stem + "-" + std::to_string(k) + std::string(suffix));
}

std::vector<fs::path> files_claiming_report_name(const fs::path& report) {
  fs::path qdstrm = report;
  qdstrm.replace_extension(".qdstrm");
  return {report, qdstrm, manifest_path_for(report)};
}

namespace {

using Json = nlohmann::ordered_json;

Json optional_json(const std::optional<std::string>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// A path is bytes, and JSON text is UTF-8: a path that is not UTF-8 is also written as the hex
// of its bytes under "<key>_bytes", so that the manifest still names the file on disk (the
// "<key>" text, with U+FFFD for each stray byte, is for people and older readers).
constexpr std::string_view kPathBytesSuffix = "_bytes";

void put_path(Json& json, const std::string& key, const std::optional<std::string>& path) {
  json[key] = optional_json(path);
  if (path && valid_utf8(*path) != *path) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    for (unsigned char c : *path) {
      hex += kHex[c >> 4];
      hex += kHex[c & 15];
    }
    json[key + std::string(kPathBytesSuffix)] = hex;
  }
}

// The bytes "<key>_bytes" holds, when it is there and is the hex of a path.
std::optional<std::string> path_bytes(const Json& json, const std::string& key) {
  const auto found = json.find(key + std::string(kPathBytesSuffix));
  if (found == json.end() || !found->is_string()) return std::nullopt;
  const std::string& hex = found->get_ref<const std::string&>();
  if (hex.empty() || hex.size() % 2 != 0) return std::nullopt;
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, value, 16);
    if (ec != std::errc() || end != hex.data() + i + 2) return std::nullopt;
    bytes += static_cast<char>(value);
  }
  if (bytes.find('\0') != std::string::npos) return std::nullopt;
  return bytes;
}

[[noreturn]] void bad_manifest(std::string_view source, const std::string& problem) {
  throw Error(std::string(source) + ": " + problem + "; expected an nsel manifest (version " +
                  std::to_string(kManifestVersion) + ")",
              1);
}

std::string string_field(const Json& json, const char* key, std::string_view source,
                         bool required = true) {
  const auto found = json.find(key);
  if (found == json.end() || found->is_null()) {
    if (required) bad_manifest(source, std::string("missing \"") + key + "\"");
    return {};
  }
  if (!found->is_string()) bad_manifest(source, std::string("\"") + key + "\" is not a string");
  return found->get<std::string>();
}

std::optional<std::string> optional_string_field(const Json& json, const char* key,
                                                 std::string_view source) {
  const auto found = json.find(key);
  if (found == json.end() || found->is_null()) return std::nullopt;
  if (!found->is_string()) bad_manifest(source, std::string("\"") + key + "\" is not a string");
  return found->get<std::string>();
}

// A rank: a whole number >= 0, or absent/null (unknown).
std::optional<long long> rank_field(const Json& json, const char* key, std::string_view source) {
  const auto found = json.find(key);
  if (found == json.end() || found->is_null()) return std::nullopt;
  if (!found->is_number_integer() ||
      (found->is_number_unsigned() &&
       found->get<unsigned long long>() >
           static_cast<unsigned long long>(std::numeric_limits<long long>::max())) ||
      found->get<long long>() < 0) {
    bad_manifest(source, std::string("\"") + key + "\" is not a rank (a whole number >= 0)");
  }
  return found->get<long long>();
}

long long integer_field(const Json& json, const char* key, std::string_view source) {
  const auto found = json.find(key);
  if (found == json.end() || found->is_null()) return 0;
  if (!found->is_number_integer()) {
    bad_manifest(source, std::string("\"") + key + "\" is not a whole number");
  }
  return found->get<long long>();
}

}  // namespace

std::string serialize_manifest(const Manifest& m) {
  Json json;
  json["nsel_manifest"] = m.version;
  json["worker"] = m.worker;
  json["pattern"] = optional_json(m.pattern);
  json["step_window"] = {{"text", m.step_window}, {"start", m.step_start}, {"stop", m.step_stop}};
  json["pid"] = m.pid;
  json["nsel_pid"] = m.nsel_pid;
  json["host"] = m.host;
  json["node_ip"] = m.node_ip;
  json["pid_namespace"] = m.pid_namespace ? Json(*m.pid_namespace) : Json(nullptr);
  json["boot_id"] = optional_json(m.boot_id);
  Json ranks = Json::object();
  for (const auto& [name, value] : m.rank_variables) ranks[name] = value;
  json["rank_variables"] = ranks;
  json["rank"] = m.rank ? Json(*m.rank) : Json(nullptr);
  json["local_rank"] = m.local_rank ? Json(*m.local_rank) : Json(nullptr);
  json["node"] = optional_json(m.node);
  json["command"] = m.command;
  json["start_time"] = m.start_time;
  json["end_time"] = optional_json(m.end_time);
  json["exit_status"] = m.exit_status ? Json(*m.exit_status) : Json(nullptr);
  put_path(json, "report", m.report);
  json["state"] = m.state;
  json["reason"] = m.reason;
  put_path(json, "qdstrm", m.qdstrm);
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Manifest parse_manifest(std::string_view text, std::string_view source) {
  Json json;
  try {
    json = Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number out of range
    bad_manifest(source, std::string("not valid JSON (") + e.what() + ")");
  }
  if (!json.is_object()) bad_manifest(source, "not a JSON object");
  const auto version = json.find("nsel_manifest");
  if (version == json.end() || !version->is_number_integer()) {
    bad_manifest(source, "no \"nsel_manifest\" version");
  }
  Manifest m;
  // Compared before narrowing, so that no large number passes for version 1.
  if (version->get<long long>() != kManifestVersion) {
    bad_manifest(source, "version " + version->dump() + " is not known to this nsel");
  }
  m.version = kManifestVersion;
  m.worker = string_field(json, "worker", source);
  m.pattern = optional_string_field(json, "pattern", source);
  if (const auto window = json.find("step_window"); window != json.end() && !window->is_null()) {
    if (!window->is_object()) bad_manifest(source, "\"step_window\" is not an object");
    m.step_window = string_field(*window, "text", source, false);
    m.step_start = integer_field(*window, "start", source);
    m.step_stop = integer_field(*window, "stop", source);
  }
  m.pid = integer_field(json, "pid", source);
  m.nsel_pid = integer_field(json, "nsel_pid", source);
  m.host = string_field(json, "host", source, false);
  m.node_ip = string_field(json, "node_ip", source, false);
  if (const auto ns = json.find("pid_namespace"); ns != json.end() && !ns->is_null()) {
    if (!ns->is_number_unsigned()) bad_manifest(source, "\"pid_namespace\" is not an inode number");
    m.pid_namespace = ns->get<unsigned long long>();
  }
  m.boot_id = optional_string_field(json, "boot_id", source);
  if (const auto ranks = json.find("rank_variables"); ranks != json.end() && !ranks->is_null()) {
    if (!ranks->is_object()) bad_manifest(source, "\"rank_variables\" is not an object");
    for (const auto& [name, value] : ranks->items()) {
      if (!value.is_string()) {
        bad_manifest(source, "rank variable " + quote(name) + " is not a string");
      }
      m.rank_variables[name] = value.get<std::string>();
    }
  }
  m.rank = rank_field(json, "rank", source);
  m.local_rank = rank_field(json, "local_rank", source);
  m.node = optional_string_field(json, "node", source);
  if (m.node && m.node->empty()) m.node.reset();
  if (const auto command = json.find("command"); command != json.end() && !command->is_null()) {
    if (!command->is_array()) bad_manifest(source, "\"command\" is not a list");
    for (const auto& word : *command) {
      if (!word.is_string()) bad_manifest(source, "\"command\" holds a non-string");
      m.command.push_back(word.get<std::string>());
    }
  }
  m.start_time = string_field(json, "start_time", source, false);
  m.end_time = optional_string_field(json, "end_time", source);
  if (const auto status = json.find("exit_status"); status != json.end() && !status->is_null()) {
    const bool in_range = status->is_number_integer() &&
                          status->get<long long>() >= std::numeric_limits<int>::min() &&
                          status->get<long long>() <= std::numeric_limits<int>::max() &&
                          !(status->is_number_unsigned() &&
                            status->get<unsigned long long>() > std::numeric_limits<int>::max());
    if (!in_range) bad_manifest(source, "\"exit_status\" is not an exit status");
    m.exit_status = status->get<int>();
  }
  m.report = string_field(json, "report", source, false);
  if (auto bytes = path_bytes(json, "report")) m.report = std::move(*bytes);
  m.state = string_field(json, "state", source);
  m.reason = string_field(json, "reason", source, false);
  m.qdstrm = optional_string_field(json, "qdstrm", source);
  if (auto bytes = path_bytes(json, "qdstrm")) m.qdstrm = std::move(*bytes);
  return m;
}

const std::vector<std::string_view>& rank_variable_names() {
  static const std::vector<std::string_view> names = {"RANK",
                                                      "LOCAL_RANK",
                                                      "WORLD_SIZE",
                                                      "LOCAL_WORLD_SIZE",
                                                      "NODE_RANK",
                                                      "GROUP_RANK",
                                                      "SLURM_PROCID",
                                                      "SLURM_LOCALID",
                                                      "SLURM_NODEID",
                                                      "SLURM_NTASKS",
                                                      "SLURM_JOB_ID",
                                                      "SLURM_STEP_ID",
                                                      "SLURM_ARRAY_TASK_ID",
                                                      "SLURM_RESTART_COUNT",
                                                      "SLURMD_NODENAME",
                                                      "OMPI_COMM_WORLD_RANK",
                                                      "OMPI_COMM_WORLD_LOCAL_RANK",
                                                      "OMPI_COMM_WORLD_SIZE",
                                                      "PMI_RANK",
                                                      "PMI_SIZE",
                                                      "PMIX_RANK",
                                                      "MV2_COMM_WORLD_RANK",
                                                      "RAY_NODE_ID",
                                                      "CUDA_VISIBLE_DEVICES"};
  return names;
}

fs::path manifest_path_for(const fs::path& report) {
  std::string name = report.filename().string();
  constexpr std::string_view suffix = ".nsys-rep";
  if (name.ends_with(suffix)) name.resize(name.size() - suffix.size());
  return report.parent_path() / (name + std::string(kManifestSuffix));
}

namespace {

template <std::size_t N>
std::optional<long long> first_rank(const Manifest& manifest,
                                    const std::array<std::string_view, N>& names) {
  for (std::string_view name : names) {
    const auto found = manifest.rank_variables.find(std::string(name));
    if (found == manifest.rank_variables.end()) continue;
    const std::string& text = found->second;
    long long rank = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), rank);
    if (ec == std::errc() && end == text.data() + text.size() && rank >= 0) return rank;
  }
  return std::nullopt;
}

}  // namespace

std::optional<long long> manifest_rank(const Manifest& manifest) {
  if (manifest.rank) return manifest.rank;
  return first_rank(manifest, kRankVariables);
}

std::optional<long long> manifest_local_rank(const Manifest& manifest) {
  if (manifest.local_rank) return manifest.local_rank;
  return first_rank(manifest, kLocalRankVariables);
}

std::string manifest_node(const Manifest& manifest) {
  if (manifest.node && !manifest.node->empty()) return *manifest.node;
  const auto slurm_node = manifest.rank_variables.find("SLURMD_NODENAME");
  if (slurm_node != manifest.rank_variables.end() && !slurm_node->second.empty()) {
    return slurm_node->second;
  }
  return manifest.host;
}

}  // namespace nsel
