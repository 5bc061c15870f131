// The state of Ray's nsight launcher, read from the text of its nsight.py.
#include <gtest/gtest.h>

#include "nsel/doctor/doctor.hpp"

TEST(Doctor, RayNsightPatchIsReadFromTheText) {
  EXPECT_EQ(nsel::ray_nsight_state(
                "        context.py_executable = \" \".join(self.nsight_cmd) + \" python\"\n"),
            nsel::RayNsightState::unpatched);
  EXPECT_EQ(nsel::ray_nsight_state("x = \" \".join(self.nsys_cmd) + \" python\""),
            nsel::RayNsightState::unpatched);
  EXPECT_EQ(
      nsel::ray_nsight_state(
          "context.py_executable = \" \".join(self.nsight_cmd) + f\" {context.py_executable}\""),
      nsel::RayNsightState::patched);
  EXPECT_EQ(nsel::ray_nsight_state("context.py_executable = something_else()"),
            nsel::RayNsightState::unknown);
}
