// What a fuzz target asserts: a broken property aborts with a message, which libFuzzer records
// as a finding (and the replay test reports as a failure).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#define NSEL_FUZZ_CHECK(condition)                                                          \
  do {                                                                                      \
    if (!(condition)) {                                                                     \
      std::fprintf(stderr, "%s:%d: property broken: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (false)

namespace nsel::fuzz {

// Every user-facing error is one line that names its source and gives the expected form.
inline bool is_one_line_error(std::string_view message, std::string_view source) {
  return message.find('\n') == std::string_view::npos && message.starts_with(source) &&
         message.find("; expected ") != std::string_view::npos;
}

}  // namespace nsel::fuzz
