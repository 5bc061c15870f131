#include <gtest/gtest.h>

#include "nsel/core/command_line.hpp"

using nsel::shell_join;
using nsel::shell_quote;

TEST(ShellQuote, PlainValuesStayReadable) {
  EXPECT_EQ(shell_quote("dtensor_policy_worker_2:4_%p"), "dtensor_policy_worker_2:4_%p");
  EXPECT_EQ(shell_quote("--capture-range=cudaProfilerApi"), "--capture-range=cudaProfilerApi");
}

TEST(ShellQuote, EverythingElseIsSingleQuoted) {
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("$(touch x)"), "'$(touch x)'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_join({"nsys", "profile", "-o", "w;x"}), "nsys profile -o 'w;x'");
}
