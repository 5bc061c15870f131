#include "nsel/render/recover.hpp"

#include <algorithm>

#include "render/formatted.hpp"
#include "render/terminal_cells.hpp"

namespace nsel {

using render_detail::formatted;
using render_detail::shown;

std::string render_recover_file_text(const std::filesystem::path& file,
                                     const std::string& message) {
  return formatted("%s: %s\n", shown(file.string()).c_str(), shown(message).c_str());
}

std::string render_recover_left_as_is_text(const std::filesystem::path& qdstrm,
                                           const std::string& problem) {
  return formatted("%s: left as is: %s\n", shown(qdstrm.string()).c_str(), shown(problem).c_str());
}

std::string render_recover_summary_text(std::size_t converted, int failed,
                                        const std::vector<ImporterChoice>& used) {
  std::vector<std::string> names;
  for (const ImporterChoice& choice : used) {
    if (!choice.importer) continue;
    const std::string name =
        choice.importer->string() + (choice.version.empty() ? "" : " (" + choice.version + ")");
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::string importers;
  for (const std::string& name : names) importers += (importers.empty() ? "" : ", ") + name;
  return formatted("%zu converted, %d left as they were (importer: %s)\n", converted, failed,
                   importers.empty() ? "none" : importers.c_str());
}

std::string render_recover_nothing_text() {
  return "No left-over .qdstrm files.\n";
}

}  // namespace nsel
