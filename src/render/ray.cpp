#include "nsel/render/ray.hpp"

#include "render/json_schema.hpp"

namespace nsel {

std::string render_ray_patch_text(const RayPatchReport& report) {
  return describe(report) + "\n";
}

nlohmann::ordered_json render_ray_patch_json(const RayPatchReport& report) {
  const nlohmann::json out = {{"file", report.file.string()},
                              {"ray_version", report.ray_version},
                              {"status", to_string(report.outcome)},
                              {"line", report.line},
                              {"message", describe(report)}};
  return render_detail::schema_first(kRayPatchJsonSchema, out);
}

}  // namespace nsel
