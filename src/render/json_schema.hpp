// Every command's JSON document begins with "schema": "nsel.<command>/<version>", so a reader
// knows what it holds before reading on.
#pragma once

#include <nlohmann/json.hpp>

namespace nsel::render_detail {

// `document` (keys sorted, as nlohmann::json keeps them) with "schema" put first; the other keys
// keep the order they were printed in before the schema id existed. A "schema" key already in
// `document` is replaced.
inline nlohmann::ordered_json schema_first(const char* schema, const nlohmann::json& document) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["schema"] = schema;
  for (const auto& [key, value] : document.items()) {
    if (key != "schema") out[key] = nlohmann::ordered_json(value);
  }
  return out;
}

}  // namespace nsel::render_detail
