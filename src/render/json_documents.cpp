// The documents nsel report and nsel diff print, each with its "schema" first: their keys come
// sorted from render_json and render_diff_json.
#include "nsel/render/diff.hpp"
#include "nsel/render/report.hpp"
#include "render/json_schema.hpp"

namespace nsel {

nlohmann::ordered_json render_report_document(const ReportSet& set) {
  return render_detail::schema_first(kReportJsonSchema, render_json(set));
}

nlohmann::ordered_json render_diff_document(const RunDiff& diff) {
  return render_detail::schema_first(kDiffJsonSchema, render_diff_json(diff));
}

}  // namespace nsel
