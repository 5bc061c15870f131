#include "nsel/core/nsys_install.hpp"

namespace nsel {
namespace fs = std::filesystem;

fs::path importer_for_nsys(const fs::path& real_nsys) {
  return real_nsys.parent_path().parent_path() / "host-linux-x64" / "QdstrmImporter";
}

std::vector<fs::path> importers_near_nsys(const fs::path& real_nsys) {
  return {importer_for_nsys(real_nsys), real_nsys.parent_path().parent_path().parent_path() /
                                            "host-linux-x64" / "QdstrmImporter"};
}

}  // namespace nsel
