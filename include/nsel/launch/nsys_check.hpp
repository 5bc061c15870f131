// Whether this node's Nsight Systems can profile: found, answering, with its importer.
#pragma once

#include <optional>
#include <string>
#include <string_view>

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

// How to install Nsight Systems, for messages.
inline constexpr std::string_view kNsysInstallHint =
    "install Nsight Systems: on Debian 12 'apt-get install nsight-systems nsight-systems-target' "
    "from the non-free component (or run scripts/setup.sh); elsewhere NVIDIA's installer, with "
    "nsys on PATH";

}  // namespace nsel
