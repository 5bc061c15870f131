// nsel: profile chosen workers of a distributed job with Nsight Systems, for a chosen window of
// steps. Parsing and the single error handler live here; each subcommand has its own file.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/sys/process.hpp"

namespace nsel::cli {

namespace {

// CLI11 says "Could not convert: --json = maybe"; nsel's errors quote the value and say the
// expected form, like every other bad value.
std::string conversion_message(const CLI::ConversionError& error, const CLI::App* command) {
  const std::string text = error.what();
  const std::string prefix = "Could not convert: ";
  const std::size_t separator = text.find(" = ", prefix.size());
  if (!text.starts_with(prefix) || separator == std::string::npos) return text;
  const std::string name = text.substr(prefix.size(), separator - prefix.size());
  const std::string value = text.substr(separator + 3);
  const CLI::Option* option = command == nullptr ? nullptr : command->get_option_no_throw(name);
  if (option != nullptr && option->get_expected_min() == 0) {
    return nsel::bad_value(name, value, "not a switch value",
                           name + " alone, or " + name + "=true / " + name + "=false");
  }
  const std::string type = option == nullptr ? "" : option->get_type_name();
  return nsel::bad_value(name, value, "not understood",
                         type.empty() ? "the form 'nsel --help' shows" : "a value of type " + type);
}

// CLI11 says "--worker: 1 required NAME missing" when a value is left out, and "--worker: At
// Most 1 required but received 2" when it is given twice.
std::string missing_value_message(const CLI::ArgumentMismatch& error) {
  const std::string text = error.what();
  const std::string required = " required ";
  const std::string missing = " missing";
  const std::size_t colon = text.find(": ");
  const std::size_t type_at = text.find(required);
  const std::string at_most = ": At Most 1 required but received ";
  if (const std::size_t repeated = text.find(at_most); repeated != std::string::npos) {
    const std::string name = text.substr(0, repeated);
    return name + " given " + text.substr(repeated + at_most.size()) + " times; expected it once";
  }
  if (colon == std::string::npos || type_at == std::string::npos || !text.ends_with(missing)) {
    return text;
  }
  const std::string name = text.substr(0, colon);
  const std::string type = text.substr(type_at + required.size(),
                                       text.size() - type_at - required.size() - missing.size());
  return nsel::bad_value(name, "", "no value given", name + " " + type);
}

// CLI11 (2.1) reads a value of a many-valued option written "[a,b]" as the list a, b (and "[0]"
// as 0, "[]" as nothing), so a worker name such as '[0]' would not reach nsel as typed. Such
// words are marked before parsing, so that CLI11 sees no leading '[', and every option gives the
// value back unmarked. A word that already begins with the mark is marked too: unmarking removes
// exactly one, so every word comes back byte for byte.
constexpr char kMark = '\x1f';

bool needs_mark(const std::string& word) {
  return (word.size() >= 2 && word.front() == '[' && word.back() == ']') ||
         (!word.empty() && word.front() == kMark);
}

void unmark(std::string& value) {
  if (!value.empty() && value.front() == kMark) value.erase(0, 1);
}

// Every option of `app` and of its subcommands, positional ones included, gives back its
// values unmarked before anything else looks at them.
void unmark_values_of(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    option->transform(CLI::Validator(
                          [](std::string& value) {
                            unmark(value);
                            return std::string();
                          },
                          ""),
                      "");
  }
  for (CLI::App* sub : app.get_subcommands({})) unmark_values_of(*sub);
}

// A value-taking option given an empty value ('--html ""') would otherwise be read as "not
// given" and quietly ignored. The message is nsel's whole line; main strips CLI11's "--name: ".
constexpr char kWholeMessage = '\x1e';

void refuse_empty_values_of(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size_max() == 0 || option->get_expected_max() == 0) continue;  // a switch
    const std::string name = option->get_name();
    // Worker and node names of plan and exec have their own message for an empty one (what
    // such a name looks like).
    const bool own_message = (app.get_name() == "plan" || app.get_name() == "exec") &&
                             (name == "--worker" || name == "worker" || name == "--node");
    if (own_message) continue;
    // "N:INT in [1 - 64]" says N; CLI11's "TEXT" (a positional's) says nothing.
    std::string form = option->get_type_name();
    form = form.substr(0, form.find(':'));
    form = "a non-empty " + (form.empty() || form == "TEXT" ? std::string("value") : form);
    option->check(CLI::Validator(
        [name, form](std::string& value) {
          if (!value.empty()) return std::string();
          return kWholeMessage + nsel::bad_value(name, value, "empty", form);
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values_of(*sub);
}

// What nsel printed on standard output must have reached it: a full disk or a failing device is
// an error (exit 1, one line), never a silent success with nothing written. Checked once, as
// nsel ends, whatever the command (and whatever its own exit code, kept when not 0).
int check_standard_output(int exit_code) {
  // std::cout shares stdio's buffer (synced, the default): one fflush covers both, and its
  // errno is the reason. A failure seen earlier left the flag set but its errno is gone.
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  if (flushed && !std::ferror(stdout) && !std::cout.fail()) return exit_code;
  const std::string why = error != 0 ? std::strerror(error) : "a write failed";
  std::fprintf(stderr, "nsel: error: cannot write to standard output: %s\n", why.c_str());
  return exit_code == 0 ? 1 : exit_code;
}

}  // namespace

}  // namespace nsel::cli

namespace {

int run_nsel(int argc, char** argv) {
  // Into a file or a pipe, output goes out in large pieces: most commands' whole output is then
  // written by check_standard_output's flush, whose failure still holds the system's reason.
  static char buffer[1 << 20];
  if (::isatty(STDOUT_FILENO) != 1) std::setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
  CLI::App app{
      "nsel profiles chosen workers of a distributed GPU job with NVIDIA Nsight Systems, for a\n"
      "chosen window of training steps, and leaves every other worker untouched.\n\n"
      "Selection (the NeMo RL contract):\n"
      "  NRL_NSYS_WORKER_PATTERNS     comma-separated fnmatch patterns, e.g. '*policy*,*vllm*'\n"
      "  NRL_NSYS_PROFILE_STEP_RANGE  start:stop, steps start <= step < stop, 1-based, e.g. 2:4\n"
      "  NRL_NSYS_EXTRA_OPTIONS       JSON object of nsys options over the defaults\n"
      "  NSEL_CAPTURE                 auto|cuda|nvtx|none (auto: CUDA profiler API with a GPU,\n"
      "                               an NVTX capture range without one)\n"
      "  NSEL_PROFILE_RANKS           only these ranks of matched workers, e.g. '0,8-15'\n"
      "  NSEL_PROFILE_LOCAL_RANKS     only these node-local ranks, e.g. '0'\n"
      "  NSEL_PROFILE_NODES           only nodes whose host name matches, e.g. 'gpu-0[0-3]'\n"
      "  (several windows: NRL_NSYS_PROFILE_STEP_RANGE=2:4,10:12, one report per window)\n"
      "  NSEL_STOP_TIMEOUT            seconds nsys may take to finish a report once the program\n"
      "                               ended or was stopped (default 60)\n"
      "  NSEL_ALLOW_UNPROFILED        1: run selected workers bare where nsys is missing\n\n"
      "Start with 'nsel demo', then 'nsel plan WORKER' to see what a worker would get;\n"
      "'nsel doctor' checks a node.",
      "nsel"};
  app.set_version_flag("--version", "nsel 0.1.0");
  app.require_subcommand(1);
  app.fallthrough(false);

  std::map<CLI::App*, nsel::cli::Action> actions;
  const auto add = [&](const char* name, auto adder) {
    nsel::cli::Action action = adder(app);
    actions[app.get_subcommand(name)] = std::move(action);
  };
  add("plan", nsel::cli::add_plan);
  add("exec", nsel::cli::add_exec);
  add("demo", nsel::cli::add_demo);
  add("report", nsel::cli::add_report);
  add("diff", nsel::cli::add_diff);
  add("ls", nsel::cli::add_ls);
  add("check", nsel::cli::add_check);
  add("recover", nsel::cli::add_recover);
  add("sync", nsel::cli::add_sync);
  add("ray", nsel::cli::add_ray);
  add("doctor", nsel::cli::add_doctor);

  // Everything after the first "--" is a program and its arguments, never nsel's options.
  std::vector<std::string> front;
  std::vector<std::string> trailing;
  bool after_separator = false;
  for (int i = 1; i < argc; ++i) {
    if (!after_separator && std::string_view(argv[i]) == "--") {
      after_separator = true;
    } else if (after_separator) {
      trailing.emplace_back(argv[i]);
    } else {
      front.emplace_back(argv[i]);
    }
  }
  nsel::cli::unmark_values_of(app);
  nsel::cli::refuse_empty_values_of(app);
  std::vector<std::string> reversed;
  for (auto word = front.rbegin(); word != front.rend(); ++word) {
    reversed.push_back(nsel::cli::needs_mark(*word) ? nsel::cli::kMark + *word : *word);
  }

  // Help and --version through stdio like the rest, so that check_standard_output sees them.
  const auto print_exit = [&app](const CLI::Error& e) {
    std::ostringstream out, err;
    const int code = app.exit(e, out, err);
    std::fputs(out.str().c_str(), stdout);
    std::fputs(err.str().c_str(), stderr);
    return code;
  };
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return print_exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return print_exit(e);
  } catch (const CLI::Success& e) {
    return print_exit(e);
  } catch (const CLI::ParseError& e) {
    // Point at the help of the subcommand the user was typing, when there is one.
    std::string help = "nsel --help";
    const CLI::App* command = nullptr;
    const auto named = std::find_if(front.begin(), front.end(), [&](const std::string& word) {
      return std::any_of(actions.begin(), actions.end(),
                         [&](const auto& entry) { return entry.first->get_name() == word; });
    });
    if (named != front.end()) {
      help = "nsel " + *named + " --help";
      for (const auto& entry : actions) {
        if (entry.first->get_name() == *named) command = entry.first;
      }
    }
    std::string message = e.what();
    if (const auto* conversion = dynamic_cast<const CLI::ConversionError*>(&e)) {
      message = nsel::cli::conversion_message(*conversion, command);
    } else if (const auto* mismatch = dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
      message = nsel::cli::missing_value_message(*mismatch);
    }
    if (const std::size_t whole = message.find(nsel::cli::kWholeMessage);
        whole != std::string::npos) {
      message.erase(0, whole + 1);
    }
    for (char& c : message) {
      if (c == '\n') c = ' ';
    }
    // CLI11's own messages may quote a word as it was handed over, marked.
    std::erase(message, nsel::cli::kMark);
    // A first word that names no command: say so, rather than "A subcommand is required".
    if (named == front.end() && !front.empty() && !front.front().starts_with("-")) {
      message = "unknown command " + nsel::quote(front.front()) + "; expected a command that " +
                "'nsel --help' lists";
    }
    // The same one level down ('nsel ray bogus').
    const auto subcommands =
        command != nullptr ? command->get_subcommands({}) : std::vector<const CLI::App*>{};
    if (!subcommands.empty() && named + 1 != front.end() && !(named + 1)->starts_with("-") &&
        std::none_of(subcommands.begin(), subcommands.end(),
                     [&](const CLI::App* sub) { return sub->get_name() == *(named + 1); })) {
      message = "unknown " + *named + " command " + nsel::quote(*(named + 1)) +
                "; expected one that '" + help + "' lists";
    }
    std::fprintf(stderr, "nsel: error: %s; see '%s'\n", message.c_str(), help.c_str());
    return nsel::kUsageExitCode;
  }

  try {
    for (auto& [subcommand, action] : actions) {
      if (subcommand->parsed()) return action(trailing);
    }
    return nsel::kUsageExitCode;
  } catch (const nsel::Error& e) {
    std::fprintf(stderr, "nsel: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nsel: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  return nsel::cli::check_standard_output(run_nsel(argc, argv));
}
