// Whether this node's Nsight Systems can profile: found, answering, with its importer.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
