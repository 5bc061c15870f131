// The outputs of `nsel doctor`: one line per check (and its fix), the problem count; and one
// JSON object.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nsel/doctor/doctor.hpp"

namespace nsel {

// The JSON document's "schema": bumped when a field changes meaning or goes away.
inline constexpr const char* kDoctorJsonSchema = "nsel.doctor/1";

// Every line nsel doctor prints, each ending in a line feed.
std::string render_doctor_text(const std::vector<DoctorCheck>& checks);
// "schema" first, then checks[] (name, status, detail, fix) and the problem count.
nlohmann::ordered_json render_doctor_json(const std::vector<DoctorCheck>& checks);

}  // namespace nsel
