// Worker-name patterns: exactly Python's fnmatch.fnmatchcase, and the comma-separated list
// rules of NRL_NSYS_WORKER_PATTERNS.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nsel {

// True when `name` matches the shell-style `pattern` with Python's fnmatchcase semantics:
// `*`, `?`, `[seq]`, `[!seq]`, no escape character, case-sensitive, on Unicode code points
// (UTF-8 input; an invalid byte counts as one code point, as Python's surrogateescape does).
bool fnmatch_case(std::string_view pattern, std::string_view name);

class PatternList {
 public:
  // Splits on ',', strips surrounding whitespace of each piece, drops empty pieces.
  static PatternList parse(std::string_view comma_separated);

  const std::vector<std::string>& patterns() const { return patterns_; }
  bool empty() const { return patterns_.empty(); }

  // The first pattern (in list order) that matches `name`.
  std::optional<std::string> first_match(std::string_view name) const;

 private:
  std::vector<std::string> patterns_;
};

}  // namespace nsel
