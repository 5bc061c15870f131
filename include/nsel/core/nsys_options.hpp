// The option set passed to `nsys profile`: the contract's defaults, NRL_NSYS_EXTRA_OPTIONS
// merged over them, and their rendering as arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nsel/core/step_window.hpp"

namespace nsel {

inline constexpr std::string_view kExtraOptionsVariable = "NRL_NSYS_EXTRA_OPTIONS";

class NsysOptions {
 public:
  using Entry = std::pair<std::string, std::string>;

  // t=cuda,nvtx  s=none  o=<worker>_<start>:<stop>_%p  stop-on-exit=true
  // capture-range=cudaProfilerApi  capture-range-end=stop  cuda-graph-trace=node
  static NsysOptions contract_defaults(std::string_view worker, const StepWindow& window);

  // Sets `key`, replacing an entry with the same key or with an nsys alias of it ("t" and
  // "trace") in place, so that a user's spelling never yields two conflicting arguments.
  void set(std::string_view key, std::string value);
  bool erase(std::string_view key);
  std::optional<std::string> get(std::string_view key) const;
  bool has(std::string_view key) const { return get(key).has_value(); }

  // Merges a JSON object over the current entries (its keys win). Strings, numbers and booleans
  // become their text; null removes the option. Throws nsel::Error naming `source`.
  void merge_json(std::string_view json_text, std::string_view source = kExtraOptionsVariable);

  // A one-letter key becomes "-k value", a longer one "--key=value".
  std::vector<std::string> to_argv() const;
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry>::iterator find(std::string_view key);
  std::vector<Entry>::const_iterator find(std::string_view key) const;
  std::vector<Entry> entries_;
};

// The long name nsys documents for a one-letter option ("t" -> "trace"); the key itself when it
// has none. Used to compare keys however the user spelled them.
std::string_view canonical_option_name(std::string_view key);

}  // namespace nsel
