#include <charconv>

#include "nsel/analyze/summary.hpp"
#include "nsel/core/error.hpp"

namespace nsel {

StepNamePattern::StepNamePattern(std::string_view pattern, std::string_view source)
    : text_(pattern) {
  const std::size_t at = pattern.find("{n}");
  if (at == std::string_view::npos || pattern.find("{n}", at + 1) != std::string_view::npos) {
    throw Error(bad_value(source, pattern, "the step number's place \"{n}\" must appear once",
                          "an NVTX range name with {n} where the step number goes, for "
                          "example 'step {n}' or 'train_step_{n}'"));
  }
  prefix_ = pattern.substr(0, at);
  suffix_ = pattern.substr(at + 3);
}

std::optional<long long> StepNamePattern::match(std::string_view name) const {
  if (name.size() <= prefix_.size() + suffix_.size()) return std::nullopt;
  if (name.substr(0, prefix_.size()) != prefix_) return std::nullopt;
  if (name.substr(name.size() - suffix_.size()) != suffix_) return std::nullopt;
  const std::string_view number =
      name.substr(prefix_.size(), name.size() - prefix_.size() - suffix_.size());
  long long step = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), step);
  if (ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
  return step;
}

}  // namespace nsel
