#include "nsel/core/nsys_options.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/output_name.hpp"
#include "nsel/core/error.hpp"

namespace nsel {
namespace {

constexpr std::string_view kExpectedObject =
    "a JSON object of nsys options, for example "
    "'{\"t\": \"cuda,nvtx,osrt\", \"cuda-memory-usage\": true}'";

// nsys profile's one-letter switches and their long names (nsys profile --help, 2022.4+).
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"b", "backtrace"},
    {"c", "capture-range"},
    {"d", "duration"},
    {"e", "env-var"},
    {"f", "force-overwrite"},
    {"i", "sampling-period"},
    {"n", "inherit-environment"},
    {"o", "output"},
    {"p", "nvtx-capture"},
    {"s", "sample"},
    {"t", "trace"},
    {"w", "show-output"},
    {"x", "stop-on-exit"},
    {"y", "delay"},
};

bool valid_key(std::string_view key) {
  if (key.empty() || key.front() == '-') return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

}  // namespace

std::string_view canonical_option_name(std::string_view key) {
  for (auto [short_name, long_name] : kAliases) {
    if (key == short_name) return long_name;
  }
  return key;
}

std::string escape_output_name(std::string_view name) {
  std::string escaped;
  for (char c : name) {
    escaped += c;
    if (c == '%') escaped += '%';
  }
  return escaped;
}

NsysOptions NsysOptions::contract_defaults(std::string_view worker, const StepWindow& window) {
  // A literal '%' in a worker name must survive nsys's expansion.
  const std::string escaped_worker = escape_output_name(worker);
  NsysOptions options;
  options.entries_ = {
      {"t", "cuda,nvtx"},
      {"s", "none"},
      {"o", escaped_worker + "_" + window.text() + "_%p"},
      {"stop-on-exit", "true"},
      {"capture-range", "cudaProfilerApi"},
      {"capture-range-end", "stop"},
      {"cuda-graph-trace", "node"},
  };
  return options;
}

std::vector<NsysOptions::Entry>::iterator NsysOptions::find(std::string_view key) {
  const std::string_view wanted = canonical_option_name(key);
  return std::find_if(entries_.begin(), entries_.end(), [&](const Entry& entry) {
    return canonical_option_name(entry.first) == wanted;
  });
}

std::vector<NsysOptions::Entry>::const_iterator NsysOptions::find(std::string_view key) const {
  return const_cast<NsysOptions*>(this)->find(key);
}

void NsysOptions::set(std::string_view key, std::string value) {
  auto it = find(key);
  if (it != entries_.end()) {
    *it = {std::string(key), std::move(value)};
  } else {
    entries_.emplace_back(std::string(key), std::move(value));
  }
}

bool NsysOptions::erase(std::string_view key) {
  auto it = find(key);
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

std::optional<std::string> NsysOptions::get(std::string_view key) const {
  auto it = find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void NsysOptions::merge_json(std::string_view json_text, std::string_view source) {
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(bad_value(source, json_text,
                          "not valid JSON (at byte " + std::to_string(e.byte) + ")",
                          kExpectedObject));
  } catch (const nlohmann::json::exception&) {
    // Found by fuzzing: a number beyond a double (1e999) is not a parse_error.
    throw Error(
        bad_value(source, json_text, "not valid JSON (a number out of range)", kExpectedObject));
  }
  if (!parsed.is_object()) {
    throw Error(bad_value(source, json_text,
                          std::string("a JSON ") + parsed.type_name() + " is not an object",
                          kExpectedObject));
  }
  // Validate everything before changing anything, so a bad entry leaves the set as it was.
  std::vector<std::pair<std::string, std::optional<std::string>>> updates;
  std::map<std::string, std::string> spelled_as;  // canonical name -> the key used
  for (const auto& [key, value] : parsed.items()) {
    // JSON objects have no order here, so two spellings of one option ("t" and "trace") would
    // be resolved by the alphabet, not by the user: refuse them.
    const auto [other, fresh] = spelled_as.emplace(std::string(canonical_option_name(key)), key);
    if (!fresh) {
      throw Error(bad_value(
          source, json_text,
          "keys " + quote(other->second) + " and " + quote(key) + " name the same nsys option",
          kExpectedObject));
    }
    if (!valid_key(key)) {
      throw Error(bad_value(source, json_text,
                            "key " + quote(key) +
                                " is not an nsys option name (letters, digits, "
                                "'-' and '_', without leading dashes)",
                            kExpectedObject));
    }
    if (value.is_null()) {
      updates.emplace_back(key, std::nullopt);
    } else if (value.is_string()) {
      updates.emplace_back(key, value.get<std::string>());
    } else if (value.is_boolean()) {
      updates.emplace_back(key, value.get<bool>() ? "true" : "false");
    } else if (value.is_number()) {
      updates.emplace_back(key, value.dump());
    } else {
      throw Error(bad_value(source, json_text,
                            "value of " + quote(key) + " is a JSON " + value.type_name() +
                                "; option values must be strings, numbers, booleans or null "
                                "(null removes a default)",
                            kExpectedObject));
    }
  }
  for (auto& [key, value] : updates) {
    if (value) {
      set(key, std::move(*value));
    } else {
      erase(key);
    }
  }
}

std::vector<std::string> NsysOptions::to_argv() const {
  std::vector<std::string> argv;
  for (const auto& [key, value] : entries_) {
    if (key.size() == 1) {
      argv.push_back("-" + key);
      argv.push_back(value);
    } else {
      argv.push_back("--" + key + "=" + value);
    }
  }
  return argv;
}

}  // namespace nsel
