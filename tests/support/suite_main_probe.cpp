// Cases for suite_main.cpp's exit code (tests/support/suite_main.cmake runs them).
#include <gtest/gtest.h>

TEST(Probe, Skips) {
  GTEST_SKIP() << "as a suite without its data does";
}
TEST(Probe, Passes) {
  SUCCEED();
}
TEST(Probe, DISABLED_Fails) {
  FAIL() << "run only when asked";
}
