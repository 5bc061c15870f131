// Names as a terminal shows them: control characters escaped by one rule, long names cut in
// bounded time.
#include "nsel/core/terminal_text.hpp"

#include <gtest/gtest.h>

#include <string>

#include "nsel/core/error.hpp"
#include "nsel/core/plan.hpp"

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

// A lead byte whose UTF-8 sequence is cut short by a control byte is a stray byte: the control
// after it is still escaped. Before, the lead byte took the next bytes with it unchecked, and a
// newline or an ESC after it reached the terminal raw.
TEST(TerminalText, AControlAfterAnUnfinishedUtf8CharacterIsStillEscaped) {
  EXPECT_EQ(terminal_text("\xe0\n"), "\xe0\\n");
  EXPECT_EQ(terminal_text("a\xf0\x9f\x1b[2J"), "a\xf0\\x9f\\x1b[2J");  // 0x9f: stray C1
  EXPECT_EQ(terminal_text("\xc3\r"), "\xc3\\r");
  EXPECT_EQ(terminal_text("\xe2\x9c\xc2\x9b"), "\xe2\\x9c\\u009b");
  EXPECT_TRUE(nsel::has_control_characters("\xe0\n"));
  nsel::WorkerPlan plan;
  plan.worker = "w\xe0\nINJECTED";
  plan.pattern = "*";
  EXPECT_EQ(plan.log_line().find('\n'), std::string::npos) << plan.log_line();
  // Whole characters of 2, 3 and 4 bytes are kept, a lone trailing lead byte too.
  EXPECT_EQ(terminal_text("\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80\xe0"),
            "\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80\xe0");
}

// A stray byte 0x80..0x9f (not inside a UTF-8 character) is an 8-bit C1 control to a terminal
// that reads 8-bit controls: 0x9b is CSI, so "\x9b" "2J" clears the screen there. Before, it was
// printed raw (nsel plan echoed it from a program's argument). A UTF-8 character whose second
// byte lies in that range (U+0101, C4 81) is text, not a control.
TEST(TerminalText, AStrayC1ByteIsEscapedAndUtf8CharactersAreNot) {
  EXPECT_EQ(terminal_text("\x9b"
                          "2J"),
            "\\x9b2J");
  EXPECT_EQ(terminal_text("a\x80\x9f\xa0"), "a\\x80\\x9f\xa0");  // 0xa0 is no control
  EXPECT_TRUE(nsel::has_control_characters("\x9b"));
  EXPECT_EQ(terminal_text("\xc4\x81\xc5\x9b"), "\xc4\x81\xc5\x9b");
  EXPECT_FALSE(nsel::has_control_characters("\xc4\x81\xc5\x9b"));
  EXPECT_EQ(nsel::quote("x\x9by"), "'x\\x9by'");
  // Cut in the same bytes as it is shown: "ā" counts 2 bytes, not an escape's 4.
  EXPECT_EQ(terminal_text("ab\xc4\x81\xc4\x81", 6), "ab\xc4\x81\xc4\x81");
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

// A one-line message's quoted value and the contract's log line follow the same rule: a C1
// control character (which a terminal takes as the start of an escape sequence) is shown as
// "\u009b", never sent raw. Before, both printed it as it was.
TEST(TerminalText, QuotedValuesAndTheContractsLogLineEscapeC1Controls) {
  EXPECT_EQ(nsel::quote("a\xc2\x9b"
                        "policy"),
            "'a\\u009bpolicy'");
  EXPECT_EQ(nsel::quote("it's a\\b\n\x1b"), "'it\\'s a\\\\b\\n\\x1b'");
  EXPECT_EQ(nsel::quote("caf\xc3\xa9"), "'caf\xc3\xa9'");
  nsel::WorkerPlan plan;
  plan.worker =
      "a\xc2\x9b"
      "policy";
  plan.pattern = "*\xc2\x9b*";
  EXPECT_EQ(plan.log_line(),
            "Nsight profiling enabled for worker 'a\\u009bpolicy' (matched pattern "
            "'*\\u009b*')");
  plan.worker = "dtensor_policy_worker";
  plan.pattern = "*policy*";
  EXPECT_EQ(plan.log_line(),
            "Nsight profiling enabled for worker 'dtensor_policy_worker' (matched pattern "
            "'*policy*')");
}

}  // namespace
