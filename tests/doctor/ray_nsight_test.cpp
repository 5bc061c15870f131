// nsel doctor's ray_nsight check reads Ray's nsight.py with the recogniser of `nsel ray patch`:
// every form that `nsel ray patch --check` tells apart, doctor tells apart the same way.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "nsel/core/ray_patch.hpp"
#include "nsel/doctor/doctor.hpp"

namespace {

std::string status(const nsel::DoctorCheck& check) {
  return std::string(nsel::to_string(check.status));
}

}  // namespace

TEST(Doctor, RayNsightIsJudgedAsRayPatchReadsIt) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"        context.py_executable = \" \".join(self.nsight_cmd) + \" python\"\n", "problem"},
      {"context.py_executable = \" \".join(self.nsys_cmd) + \" python\"", "problem"},
      // Single-quoted and unspaced forms, which doctor once judged by a rule of its own.
      {"context.py_executable = ' '.join(self.nsight_cmd) + ' python'", "problem"},
      {"context.py_executable=\" \".join(self.nsight_cmd)+\" python\"", "problem"},
      {"context.py_executable = \" \".join(self.nsight_cmd) + f\" {context.py_executable}\"", "ok"},
      {"context.py_executable = ' '.join(self.nsight_cmd) + f' {context.py_executable}'", "ok"},
      {"context.py_executable = something_else()", "warning"},
  };
  for (const auto& [text, expected] : cases) {
    const nsel::DoctorCheck check = nsel::judge_ray_nsight("/ray/nsight.py", text);
    EXPECT_EQ(check.name, "ray_nsight");
    EXPECT_EQ(status(check), expected) << text;
    const nsel::RayNsightState state = nsel::edit_ray_nsight_source(text).before;
    EXPECT_EQ(status(check), state == nsel::RayNsightState::unpatched ? "problem"
                             : state == nsel::RayNsightState::patched ? "ok"
                                                                      : "warning")
        << text;
  }
}
