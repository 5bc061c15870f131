// nsel doctor's lines and JSON, drawn from checks built by hand.
#include "nsel/render/doctor.hpp"

#include <gtest/gtest.h>

#include "hostile_name.hpp"

namespace {

using Status = nsel::DoctorCheck::Status;

std::vector<nsel::DoctorCheck> checks() {
  return {{"nsys", Status::ok, "2024.5.1 at /usr/bin/nsys", ""},
          {"gpu", Status::warning, "no CUDA device", "install the NVIDIA driver"},
          {"space", Status::problem, "1.0 GiB free in /tmp/ray", "free some space"},
          {"ray_nsight", Status::skipped, "Ray is not installed", ""}};
}

}  // namespace

TEST(RenderDoctor, OneLinePerCheckItsFixAndTheCount) {
  EXPECT_EQ(nsel::render_doctor_text(checks()),
            "ok       nsys             2024.5.1 at /usr/bin/nsys\n"
            "warning  gpu              no CUDA device\n"
            "                          fix: install the NVIDIA driver\n"
            "problem  space            1.0 GiB free in /tmp/ray\n"
            "                          fix: free some space\n"
            "skipped  ray_nsight       Ray is not installed\n"
            "1 problem\n");
  EXPECT_EQ(nsel::render_doctor_text({}), "0 problems\n");
  std::vector<nsel::DoctorCheck> two = checks();
  two[1].status = Status::problem;
  EXPECT_TRUE(nsel::render_doctor_text(two).ends_with("\n2 problems\n"));
}

TEST(RenderDoctor, JsonWhole) {
  EXPECT_EQ(nsel::render_doctor_json(checks()).dump(),
            R"({"schema":"nsel.doctor/1","checks":[)"
            R"({"detail":"2024.5.1 at /usr/bin/nsys","fix":null,"name":"nsys","status":"ok"},)"
            R"({"detail":"no CUDA device","fix":"install the NVIDIA driver","name":"gpu",)"
            R"("status":"warning"},)"
            R"({"detail":"1.0 GiB free in /tmp/ray","fix":"free some space","name":"space",)"
            R"("status":"problem"},)"
            R"({"detail":"Ray is not installed","fix":null,"name":"ray_nsight",)"
            R"("status":"skipped"}],"problems":1})");
}

// A detail naming a folder the user chose keeps its bytes in JSON.
TEST(RenderDoctor, JsonKeepsAHostileFolderExact) {
  std::vector<nsel::DoctorCheck> space = {
      {"space", Status::ok, "9 GiB free in " + nsel::test::kHostile, ""}};
  const nlohmann::ordered_json json = nsel::render_doctor_json(space);
  EXPECT_EQ(json["checks"][0]["detail"].get<std::string>(),
            "9 GiB free in " + nsel::test::kHostile);
  EXPECT_EQ(
      json["checks"][0]["detail"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      "\"9 GiB free in " + nsel::test::kHostileJson.substr(1));
}
