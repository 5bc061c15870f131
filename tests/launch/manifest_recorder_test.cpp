// Where the manifest recorder looks for the report nsys writes, and the manifest beside it.
#include <gtest/gtest.h>

#include "nsel/core/manifest.hpp"
#include "nsel/launch/manifest_recorder.hpp"

TEST(Manifest, ReportPathFollowsNsysExpansion) {
  EXPECT_EQ(nsel::expand_report_path("w_2:4_%p", 42, "/work"), "/work/w_2:4_42.nsys-rep");
  EXPECT_EQ(nsel::expand_report_path("/abs/r%%_%p.nsys-rep", 7, "/work"), "/abs/r%_7.nsys-rep");
  EXPECT_EQ(nsel::manifest_path_for("/a/w_2:4_42.nsys-rep"), "/a/w_2:4_42.nsel.json");
}
