#include <gtest/gtest.h>

#include "nsel/core/error.hpp"
#include "nsel/core/step_window.hpp"

using nsel::parse_step_window;
using nsel::StepWindow;

namespace {

std::string error_of(std::string_view value) {
  try {
    parse_step_window(value);
  } catch (const nsel::Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  return "";
}

constexpr const char* kExpected =
    "; expected 'start:stop' with whole numbers 1 <= start < stop, for example '2:4' (steps 2 "
    "and 3)";

}  // namespace

TEST(StepWindow, ParsesAndTrims) {
  EXPECT_EQ(parse_step_window("2:4"), (StepWindow{2, 4}));
  EXPECT_EQ(parse_step_window(" 5:10 "), (StepWindow{5, 10}));
  EXPECT_EQ(parse_step_window(" 5 : 10 "), (StepWindow{5, 10}));
  EXPECT_EQ(parse_step_window("1:2"), (StepWindow{1, 2}));
  EXPECT_EQ(parse_step_window("2:4").text(), "2:4");
  EXPECT_TRUE(StepWindow({2, 4}).contains(3));
  EXPECT_FALSE(StepWindow({2, 4}).contains(4));
}

TEST(StepWindow, ContractErrorsAreExact) {
  const std::string v = "NRL_NSYS_PROFILE_STEP_RANGE=";
  EXPECT_EQ(error_of("0:10"), v + "'0:10': start must be >= 1 (steps are 1-based)" + kExpected);
  EXPECT_EQ(
      error_of("5:3"),
      v + "'5:3': empty range (stop must be greater than start; stop is exclusive)" + kExpected);
  EXPECT_EQ(
      error_of("5:5"),
      v + "'5:5': empty range (stop must be greater than start; stop is exclusive)" + kExpected);
  EXPECT_EQ(error_of("5"), v + "'5': missing ':' between start and stop" + kExpected);
  EXPECT_EQ(error_of("a:b"), v + "'a:b': start 'a' is not a whole number" + kExpected);
  EXPECT_EQ(error_of("1:b"), v + "'1:b': stop 'b' is not a whole number" + kExpected);
  EXPECT_EQ(error_of("1:2:3"), v + "'1:2:3': more than one ':'" + kExpected);
  EXPECT_EQ(error_of(":"), v + "':': start is missing" + kExpected);
  EXPECT_EQ(error_of("1:"), v + "'1:': stop is missing" + kExpected);
  EXPECT_EQ(error_of("99999999999999999999:99999999999999999999999"),
            v +
                "'99999999999999999999:99999999999999999999999': start '99999999999999999999' is "
                "too large" +
                kExpected);
  EXPECT_EQ(error_of("1:99999999999999999999"),
            v + "'1:99999999999999999999': stop '99999999999999999999' is too large" + kExpected);
  EXPECT_EQ(error_of("-1:3"), v + "'-1:3': start must be >= 1 (steps are 1-based)" + kExpected);
  EXPECT_EQ(error_of("1.5:3"), v + "'1.5:3': start '1.5' is not a whole number" + kExpected);
  // A newline in the value is escaped so the message stays on one line.
  EXPECT_EQ(error_of("2\n:x"), v + "'2\\n:x': stop 'x' is not a whole number" + kExpected);
}
