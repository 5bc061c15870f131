// The outputs of `nsel demo`: the HTML page, the lines that end the demo (workers, reports, the
// step table, the straggler, the verdict) and one JSON object.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nsel/workflow/demo.hpp"

namespace nsel {

// The JSON document's "schema": bumped when a field changes meaning or goes away.
inline constexpr const char* kDemoJsonSchema = "nsel.demo/1";

// Writes the summary's HTML page as `nsel report --html` does, to <session>/nsel-report.html,
// and sets run.html; nothing when the run has no summary.
void write_demo_page(DemoRun& run);

// Every line nsel demo prints on stdout, each ending in a line feed.
std::string render_demo_text(const DemoRun& run);
// "schema" first, then the run's keys in their sorted order (as before the schema id).
nlohmann::ordered_json render_demo_json(const DemoRun& run);

}  // namespace nsel
