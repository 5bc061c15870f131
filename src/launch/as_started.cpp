#include "nsel/launch/as_started.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace nsel {
namespace {

constexpr int kLastSignal = 64;

// A field of /proc/self/status read as a number in `base` ("Umask" in octal, "SigIgn" in hex).
std::optional<std::uint64_t> status_field(std::string_view name, int base) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with(name) || line.size() <= name.size() || line[name.size()] != ':') continue;
    std::size_t at = name.size() + 1;
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    std::uint64_t value = 0;
    const auto [end, error] =
        std::from_chars(line.data() + at, line.data() + line.size(), value, base);
    if (error != std::errc() || end == line.data() + at) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

// glibc's sigaction refuses signals 32 and 33 (its own), which nsys leaves ignored: the kernel's
// call takes every signal. Only SIG_DFL and SIG_IGN are set, so an all-zero action (no flags, no
// mask, no restorer) with the handler word set fits every architecture's layout.
bool set_disposition(int signal_number, bool ignore) {
  unsigned long action[4] = {ignore ? 1ul : 0ul, 0, 0, 0};
  return ::syscall(SYS_rt_sigaction, signal_number, action, nullptr, 8) == 0;
}

bool has_bit(std::uint64_t set, int signal_number) {
  return ((set >> (signal_number - 1)) & 1u) != 0;
}

}  // namespace

InheritedState inherited_state_now() {
  InheritedState state;
  if (const auto mask = status_field("Umask", 8)) {
    state.umask = static_cast<mode_t>(*mask);
  } else {
    state.umask = ::umask(022);  // older kernels: read by setting (no thread runs yet)
    ::umask(state.umask);
  }
  state.ignored = status_field("SigIgn", 16).value_or(0);
  state.blocked = status_field("SigBlk", 16).value_or(0);
  for (int resource = 0; resource < RLIM_NLIMITS; ++resource) {
    rlimit limit{};
    if (::getrlimit(static_cast<__rlimit_resource>(resource), &limit) == 0) {
      state.soft_limits.emplace_back(resource, static_cast<std::uint64_t>(limit.rlim_cur));
    }
  }
  return state;
}

std::string encode_inherited_state(const InheritedState& state) {
  char head[80];
  std::snprintf(head, sizeof head, "u%o,i%llx,b%llx", static_cast<unsigned>(state.umask),
                static_cast<unsigned long long>(state.ignored),
                static_cast<unsigned long long>(state.blocked));
  std::string word = head;
  for (const auto& [resource, soft] : state.soft_limits) {
    word += ",l" + std::to_string(resource) + "=" + std::to_string(soft);
  }
  return word;
}

std::optional<InheritedState> decode_inherited_state(std::string_view word, std::string& why) {
  InheritedState state;
  bool umask_seen = false;
  std::size_t begin = 0;
  while (true) {
    std::size_t end = word.find(',', begin);
    if (end == std::string_view::npos) end = word.size();
    const std::string_view item = word.substr(begin, end - begin);
    if (item.size() < 2) {
      why = "an empty or one-letter item";
      return std::nullopt;
    }
    const char* first = item.data() + 1;
    const char* last = item.data() + item.size();
    std::uint64_t value = 0;
    std::from_chars_result read{};
    switch (item.front()) {
      case 'u':
        read = std::from_chars(first, last, value, 8);
        if (value > 0777) {
          why = "a umask above 0777";
          return std::nullopt;
        }
        state.umask = static_cast<mode_t>(value);
        umask_seen = true;
        break;
      case 'i':
        read = std::from_chars(first, last, state.ignored, 16);
        break;
      case 'b':
        read = std::from_chars(first, last, state.blocked, 16);
        break;
      case 'l': {
        int resource = -1;
        read = std::from_chars(first, last, resource, 10);
        if (read.ec != std::errc() || read.ptr == last || *read.ptr != '=' || resource < 0 ||
            resource >= RLIM_NLIMITS) {
          why = "a limit that is not RESOURCE=SOFT";
          return std::nullopt;
        }
        read = std::from_chars(read.ptr + 1, last, value, 10);
        state.soft_limits.emplace_back(resource, value);
        break;
      }
      default:
        why = "an item that is not u, i, b or l";
        return std::nullopt;
    }
    if (read.ec != std::errc() || read.ptr != last) {
      why = "a number not understood";
      return std::nullopt;
    }
    if (end == word.size()) break;
    begin = end + 1;
  }
  if (!umask_seen) {
    why = "no umask";
    return std::nullopt;
  }
  return state;
}

std::string restore_inherited_state(const InheritedState& state) {
  std::string missed;
  const auto miss = [&](const std::string& what) {
    missed += (missed.empty() ? "" : ", ") + what + " (" + std::strerror(errno) + ")";
  };
  ::umask(state.umask);
  const std::uint64_t ignored_now = inherited_state_now().ignored;
  for (int signal_number = 1; signal_number <= kLastSignal; ++signal_number) {
    if (signal_number == SIGKILL || signal_number == SIGSTOP) continue;
    const bool wanted = has_bit(state.ignored, signal_number);
    if (has_bit(ignored_now, signal_number) == wanted) continue;
    if (!set_disposition(signal_number, wanted)) miss("signal " + std::to_string(signal_number));
  }
  sigset_t mask;
  sigemptyset(&mask);
  for (int signal_number = 1; signal_number <= kLastSignal; ++signal_number) {
    // glibc keeps 32 and 33 to itself and refuses them here; nothing else blocks them.
    if (has_bit(state.blocked, signal_number)) sigaddset(&mask, signal_number);
  }
  if (::sigprocmask(SIG_SETMASK, &mask, nullptr) != 0) miss("the signal mask");
  for (const auto& [resource, soft] : state.soft_limits) {
    rlimit limit{};
    const auto which = static_cast<__rlimit_resource>(resource);
    if (::getrlimit(which, &limit) != 0 || limit.rlim_cur == soft) continue;
    if (limit.rlim_max != RLIM_INFINITY && soft > limit.rlim_max) {
      errno = EPERM;
      miss("limit " + std::to_string(resource));
      continue;
    }
    limit.rlim_cur = static_cast<rlim_t>(soft);
    if (::setrlimit(which, &limit) != 0) miss("limit " + std::to_string(resource));
  }
  return missed;
}

std::vector<std::string> as_started_command(const std::string& step, const InheritedState& state,
                                            const std::vector<std::string>& program) {
  std::vector<std::string> command = {step, encode_inherited_state(state), "--"};
  command.insert(command.end(), program.begin(), program.end());
  return command;
}

}  // namespace nsel
