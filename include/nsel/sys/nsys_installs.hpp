// The Nsight Systems installations on this machine, each asked its version once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nsel/core/nsys_version.hpp"

namespace nsel {

// The search, in order (the same installation, links resolved, is listed once):
//   - NSEL_NSYS, when set and not empty: a path of nsys, or several separated by ':'; then these
//     alone are used (each must be an executable file whose `nsys --version` answers, else
//     nsel::Error with exit code 2 naming NSEL_NSYS);
//   - else the nsys on `path_variable`, then the known locations: /usr/bin/nsys,
//     /opt/nsight-systems-*/usr/bin/nsys, /opt/nvidia/nsight-systems/*/bin/nsys and
//     /usr/local/cuda*/bin/nsys (one that does not answer `nsys --version` is left out).
std::vector<NsysInstall> find_nsys_installs(const std::optional<std::string>& nsel_nsys,
                                            std::string_view path_variable);

// How NSEL_NSYS is written, for messages and help.
inline constexpr std::string_view kNselNsysForm =
    "a path of nsys, or several separated by ':', e.g. "
    "/opt/nsight-systems-2023.4/usr/bin/nsys:/usr/bin/nsys";

// The QdstrmImporter of an install: the first of importers_near_nsys (its binary, links
// resolved) that is an executable file, or nullopt. The one answer to "the importer of an
// install" for recover, doctor and the generations nsel lists.
std::optional<std::string> importer_of(const NsysInstall& install);

// The version `nsys --version` of `nsys` gives (bounded to 20 s), or nullopt.
std::optional<NsysVersion> ask_nsys_version(const std::string& nsys);

}  // namespace nsel
