#pragma once
// What a profiled program inherits as if nsys were not there. nsys starts the program with umask
// 0000 (its checkpoints and folders would be world-writable) and signals 32 and 33 ignored. nsel
// exec takes the state before it starts nsys and gives nsys, as the program, its own step
// `nsel-as-started STATE -- PROGRAM [ARGS...]`, which gives the state back and executes the
// program in the same process (the same pid, the same report name). The step is linked
// statically: nsys's injection (LD_PRELOAD) never loads into it, only into the program, so nsys
// sees one process as without the step.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nsel {

struct InheritedState {
  mode_t umask = 022;
  std::uint64_t ignored = 0;                               // bit n-1: signal n is ignored
  std::uint64_t blocked = 0;                               // bit n-1: signal n is blocked
  std::vector<std::pair<int, std::uint64_t>> soft_limits;  // resource, soft limit
  bool operator==(const InheritedState&) const = default;
};

// This process's state now.
InheritedState inherited_state_now();

// One word for the command line, and back: nullopt, with why in `why`, for a word that
// encode_inherited_state cannot have made.
std::string encode_inherited_state(const InheritedState& state);
std::optional<InheritedState> decode_inherited_state(std::string_view word, std::string& why);

// Gives `state` back to this process: the umask, which signals are ignored (the others take
// their default, the only other disposition an exec keeps), the signal mask, and each soft limit
// that its hard limit allows. Returns what could not be given back ("" for nothing).
std::string restore_inherited_state(const InheritedState& state);

// The step's file name, beside nsel.
inline constexpr std::string_view kAsStartedProgram = "nsel-as-started";

// `step` STATE -- PROGRAM [ARGS...].
std::vector<std::string> as_started_command(const std::string& step, const InheritedState& state,
                                            const std::vector<std::string>& program);

}  // namespace nsel
