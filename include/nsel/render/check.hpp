// The outputs of `nsel check`: the table of verdicts with the run's verdict line, and one JSON
// object.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nsel/workflow/check_run.hpp"

namespace nsel {

// The JSON document's "schema": bumped when a field changes meaning or goes away. Its
// "nsel_check": 1 stays beside it for the scripts that read that.
inline constexpr const char* kCheckJsonSchema = "nsel.check/1";

// Every line nsel check prints, each ending in a line feed; `searched` are the folders named in
// the first line (the roots searched, or the defaults). Names are escaped for the terminal.
std::string render_check_text(const RunCheck& check,
                              const std::vector<std::filesystem::path>& searched);
// "schema" first, then the keys --help lists, names exact.
nlohmann::ordered_json render_check_json(const RunCheck& check);

}  // namespace nsel
