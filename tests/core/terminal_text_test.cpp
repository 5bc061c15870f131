// Names as a terminal shows them: control characters escaped by one rule, long names cut in
// bounded time.
#include "nsel/core/terminal_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using nsel::terminal_text;

TEST(TerminalText, EscapesEveryControlCharacterAndKeepsTheRest) {
  EXPECT_EQ(terminal_text("step 1"), "step 1");
  EXPECT_EQ(terminal_text("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(terminal_text(std::string("\x1b[2J\x07\x7f", 6)), "\\x1b[2J\\x07\\x7f");
  EXPECT_EQ(terminal_text(std::string("nul\0byte", 8)), "nul\\x00byte");
  EXPECT_EQ(terminal_text("\xc2\x9b"
                          "31m"),
            "\\u009b31m");  // C1 CSI, UTF-8 encoded
  EXPECT_EQ(terminal_text("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");  // UTF-8 kept
  EXPECT_EQ(terminal_text("back\\slash"), "back\\slash");  // already-quoted text passes as is
  EXPECT_TRUE(nsel::has_control_characters("a\nb"));
  EXPECT_FALSE(nsel::has_control_characters("a b"));
}

TEST(TerminalText, CutsLongNamesWithAMarkWithinTheLimit) {
  EXPECT_EQ(terminal_text("abcdefghij", 10), "abcdefghij");
  EXPECT_EQ(terminal_text("abcdefghijk", 10), "abcdefg...");
  // An escape is never cut open.
  EXPECT_EQ(terminal_text("abcde\nfghij", 8), "abcde...");
  // Nor a UTF-8 character.
  EXPECT_EQ(terminal_text("abcd\xc3\xa9\xc3\xa9xyz", 8), "abcd...");
  const std::string huge(5'000'000, 'x');
  EXPECT_EQ(terminal_text(huge, 64).size(), 64u);
  EXPECT_EQ(terminal_text(huge + "\n", 64).substr(61), "...");
}

}  // namespace
