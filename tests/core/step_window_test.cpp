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

TEST(StepWindow, NumbersAreReadAsPythonsIntReadsThem) {
  // NeMo RL parses each half with int(): underscores between digits, any script's decimal digits
  // (Unicode category Nd), Unicode blanks around, a sign.
  EXPECT_EQ(parse_step_window("1_0:2_0"), (StepWindow{10, 20}));
  EXPECT_EQ(parse_step_window("\xef\xbc\x93:\xef\xbc\x97"),
            (StepWindow{3, 7}));                                          // full-width ３:７
  EXPECT_EQ(parse_step_window("\xd9\xa3:\xd9\xa7"), (StepWindow{3, 7}));  // Arabic-Indic ٣:٧
  EXPECT_EQ(parse_step_window("\xe0\xa5\xa8:\xe0\xa5\xaa"), (StepWindow{2, 4}));  // Devanagari २:४
  EXPECT_EQ(parse_step_window("\xf0\x9d\x9f\x93:\xf0\x9d\x9f\x97"),
            (StepWindow{5, 9}));  // mathematical bold 𝟓:𝟗
  EXPECT_EQ(parse_step_window("\xc2\xa0"
                              "5:10\xe3\x80\x80"),
            (StepWindow{5, 10}));  // no-break space, ideographic space
  EXPECT_EQ(parse_step_window("+2:\xe2\x80\xa8+4\xc2\x85"), (StepWindow{2, 4}));
  EXPECT_EQ(parse_step_window("0_0_2:1\xef\xbc\x90"), (StepWindow{2, 10}));
  const std::string v = "NRL_NSYS_PROFILE_STEP_RANGE=";
  EXPECT_EQ(error_of("1__0:20"), v + "'1__0:20': start '1__0' is not a whole number" + kExpected);
  EXPECT_EQ(error_of("_1:3"), v + "'_1:3': start '_1' is not a whole number" + kExpected);
  EXPECT_EQ(error_of("1_:3"), v + "'1_:3': start '1_' is not a whole number" + kExpected);
  EXPECT_EQ(error_of("+_1:3"), v + "'+_1:3': start '+_1' is not a whole number" + kExpected);
  EXPECT_EQ(error_of("- 1:3"), v + "'- 1:3': start '- 1' is not a whole number" + kExpected);
  // U+001C..U+001F are str.isspace() but int() refuses them; U+200B is no blank at all.
  EXPECT_NE(error_of("\x1c"
                     "1:3"),
            "");
  EXPECT_NE(error_of("\xe2\x80\x8b"
                     "1:3"),
            "");
  // Superscripts and fractions are digits of a sort, but not decimal ones.
  EXPECT_NE(error_of("\xc2\xb2:3"), "");
  EXPECT_EQ(error_of("1:9223372036854775808"),
            v + "'1:9223372036854775808': stop '9223372036854775808' is too large" + kExpected);
  EXPECT_EQ(parse_step_window("1:9223372036854775807"), (StepWindow{1, 9223372036854775807LL}));
}
