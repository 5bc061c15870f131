// How every command writes its JSON (json_text), and the documents nsel report and nsel diff
// print, each with its "schema" first: their keys come sorted from render_json and
// render_diff_json.
#include <stdexcept>

#include "nsel/render/diff.hpp"
#include "nsel/render/json_text.hpp"
#include "nsel/render/report.hpp"
#include "render/json_schema.hpp"

namespace nsel {

std::string json_text(const nlohmann::ordered_json& document, JsonLayout layout) {
  if (!document.is_object() || document.empty() || document.begin().key() != "schema") {
    throw std::logic_error("a JSON document of nsel without \"schema\" as its first key");
  }
  return document.dump(layout == JsonLayout::document ? 2 : -1, ' ', false,
                       nlohmann::json::error_handler_t::replace);
}

nlohmann::ordered_json render_report_document(const ReportSet& set) {
  return render_detail::schema_first(kReportJsonSchema, render_json(set));
}

nlohmann::ordered_json render_diff_document(const RunDiff& diff) {
  return render_detail::schema_first(kDiffJsonSchema, render_diff_json(diff));
}

}  // namespace nsel
