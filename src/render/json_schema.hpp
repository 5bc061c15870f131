// Every command's JSON document begins with "schema": "nsel.<command>/<version>", so a reader
// knows what it holds before reading on.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

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

// A text field: its text, or null where there is none.
inline nlohmann::ordered_json text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
}

}  // namespace nsel::render_detail
