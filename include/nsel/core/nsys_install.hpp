// Where an Nsight Systems installation keeps its QdstrmImporter (the program that turns nsys's
// raw .qdstrm capture into a .nsys-rep), worked out from paths alone: nothing is looked at.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace nsel {

// The importer nsys itself runs, for `real_nsys` (its binary with links resolved): in
// host-linux-x64/ beside the folder that binary is in.
std::filesystem::path importer_for_nsys(const std::filesystem::path& real_nsys);

// Where an importer that can serve `real_nsys` may be: importer_for_nsys first, then
// host-linux-x64/ one folder further up (installers that nest the binaries one level deeper).
std::vector<std::filesystem::path> importers_near_nsys(const std::filesystem::path& real_nsys);

// Where Debian's nsight-systems package keeps its importer.
inline constexpr std::string_view kDebianImporterDir = "/usr/lib/nsight-systems/host-linux-x64";

}  // namespace nsel
