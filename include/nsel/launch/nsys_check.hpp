// Whether this node's Nsight Systems can profile: found, answering, with its importer.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/nsys_options.hpp"
#include "nsel/core/nsys_version.hpp"

namespace nsel {

struct NsysCheck {
  std::optional<std::string> path;  // absolute, when found on PATH
  std::string version;              // "2022.4.2.1-df9881f", when it answered
  std::string importer;             // the QdstrmImporter it will use, when found
  bool usable = false;
  std::string problem;  // why not usable (one sentence), empty when usable
  std::string fix;      // what to do about it
};

// Finds nsys on `path_variable`, asks it its version (bounded), and looks for the importer that
// turns its raw capture into a report (without it every report stays a .qdstrm file).
NsysCheck check_nsys(std::string_view path_variable);

// An installed Nsight Systems generation and its importer ("" when it has none).
struct NsysGeneration {
  NsysInstall install;
  std::string importer;
};

// Whether the nsys that will run them knows every option name of `option_argv` (the words of
// NsysOptions::to_argv()): nsys's own answer, from `nsys profile <options> --help`, which refuses
// an unknown name at once (exit 1, "unrecognised option '--bogus=1'") and checks no value.
struct NsysOptionsAnswer {
  bool asked = false;   // nsys answered (false: it could not be asked; `problem` says why)
  bool known = true;    // every name is one of its options
  std::string refusal;  // nsys's own line when it refused one
  std::string problem;  // why nsys could not be asked
};
NsysOptionsAnswer ask_nsys_about_options(const std::string& nsys,
                                         const std::vector<std::string>& option_argv);

// nsys checks an option's value (`-t cuda,bogus`) only when it profiles: a trial run of the
// options on `true` (a program that exits at once, so the capture range never opens), with the
// output sent into a private temporary folder that is removed afterwards. About 0.6 s.
struct NsysTrialAnswer {
  bool ran = false;      // nsys ran (false: `problem` says why it could not)
  bool accepted = true;  // nsys profiled with them
  bool usage = false;    // nsys refused them as a usage error (its `usage:` text followed)
  std::string refusal;   // nsys's first line when it did not accept them
  std::string problem;
};
NsysTrialAnswer try_nsys_options(const std::string& nsys, NsysOptions options);

// Throws nsel::Error (exit code 2) naming NRL_NSYS_EXTRA_OPTIONS (`extra_options`, the value as
// set) when `nsys` (at `nsys_path`, of `nsys_version`) refuses an option name of `options`; a
// refused option nsel added itself is exit code 1 (nsel's fault, not the user's). With
// `trial_run`, the options are also tried for real (try_nsys_options), so a bad value is caught
// too, and an nsys that cannot profile is exit code 1 naming nsys and its version. Does nothing
// when nsys could not be asked (the launch itself then fails with nsys's own message).
void require_known_options(const NsysOptions& options, const std::string& nsys_path,
                           const std::string& nsys_version,
                           const std::optional<std::string>& extra_options, bool trial_run = false);

// Every Nsight Systems installed, as nsel report and nsel recover search them
// (find_nsys_installs: NSEL_NSYS, else PATH and the known locations). Throws nsel::Error (exit
// code 2) for a bad NSEL_NSYS.
std::vector<NsysGeneration> installed_generations(const std::optional<std::string>& nsel_nsys,
                                                  std::string_view path_variable);

// One line for nsel doctor: each generation (version, path, importer or not), the newest report
// version they read and the .qdstrm versions they import.
std::string describe_generations(const std::vector<NsysGeneration>& generations);

// How to install Nsight Systems, for messages.
inline constexpr std::string_view kNsysInstallHint =
    "install Nsight Systems: on Debian 12 'apt-get install nsight-systems nsight-systems-target' "
    "from the non-free component (or run scripts/setup.sh); elsewhere NVIDIA's installer, with "
    "nsys on PATH";

}  // namespace nsel
