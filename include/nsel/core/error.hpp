// Errors that reach the user: one line, exit code attached.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace nsel {

// Exit code for bad input (a variable, a flag, a value): the convention of every nsel command.
inline constexpr int kUsageExitCode = 2;

// Thrown below the top level; `main` catches it once and prints `nsel: error: <what>`.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = kUsageExitCode)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

// Quotes a user value for a one-line message: 'value', with quotes and backslashes escaped and
// control characters (C0, DEL and C1) shown as terminal_text() shows them, so that the message
// never spans lines, never drives a terminal and is unambiguous.
std::string quote(std::string_view value);

// The message shape every bad value uses: "<source>='<value>': <problem>; expected <form>".
std::string bad_value(std::string_view source, std::string_view value, std::string_view problem,
                      std::string_view expected);

}  // namespace nsel
