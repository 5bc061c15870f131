// The outputs of `nsel ls`: every report, .qdstrm and manifest found, grouped by root, job, node
// and session with its state and nsel check's verdict from the files alone; and one JSON object.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nsel/workflow/check_run.hpp"

namespace nsel {

// The JSON document's "schema": bumped when a field changes meaning or goes away. Its
// "nsel_ls": 1 stays beside it for the scripts that read that.
inline constexpr const char* kLsJsonSchema = "nsel.ls/1";

// Every line nsel ls prints, each ending in a line feed; `searched` are the folders named when
// nothing was found. Names are escaped for the terminal.
std::string render_ls_text(const ListedReports& listed,
                           const std::vector<std::filesystem::path>& searched);
// "schema" first, then the keys --help lists, names exact.
nlohmann::ordered_json render_ls_json(const ListedReports& listed);

}  // namespace nsel
