#include "nsel/render/doctor.hpp"

#include "render/formatted.hpp"
#include "render/json_schema.hpp"

namespace nsel {
namespace {

using render_detail::formatted;

int problems_in(const std::vector<DoctorCheck>& checks) {
  int problems = 0;
  for (const DoctorCheck& check : checks) {
    problems += check.status == DoctorCheck::Status::problem ? 1 : 0;
  }
  return problems;
}

}  // namespace

nlohmann::ordered_json render_doctor_json(const std::vector<DoctorCheck>& checks) {
  nlohmann::json out = {{"checks", nlohmann::json::array()}, {"problems", problems_in(checks)}};
  for (const DoctorCheck& check : checks) {
    out["checks"].push_back(
        {{"name", check.name},
         {"status", to_string(check.status)},
         {"detail", check.detail},
         {"fix", check.fix.empty() ? nlohmann::json(nullptr) : nlohmann::json(check.fix)}});
  }
  return render_detail::schema_first(kDoctorJsonSchema, out);
}

std::string render_doctor_text(const std::vector<DoctorCheck>& checks) {
  std::string out;
  for (const DoctorCheck& check : checks) {
    out += formatted("%-8s %-16s %s\n", std::string(to_string(check.status)).c_str(),
                     check.name.c_str(), check.detail.c_str());
    if (!check.fix.empty()) out += formatted("%-8s %-16s fix: %s\n", "", "", check.fix.c_str());
  }
  const int problems = problems_in(checks);
  out += formatted("%d problem%s\n", problems, problems == 1 ? "" : "s");
  return out;
}

}  // namespace nsel
