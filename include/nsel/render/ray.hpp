// The outputs of `nsel ray patch`: the outcome as one line, or as one JSON object.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nsel/launch/ray_patch_file.hpp"

namespace nsel {

// The JSON object's "schema": bumped when a field changes meaning or goes away.
inline constexpr const char* kRayPatchJsonSchema = "nsel.ray-patch/1";

// The outcome's line (describe(report)) with its line feed.
std::string render_ray_patch_text(const RayPatchReport& report);
// "schema" first, then file, line, message, ray_version and status (their sorted order, as
// before the schema id).
nlohmann::ordered_json render_ray_patch_json(const RayPatchReport& report);

}  // namespace nsel
