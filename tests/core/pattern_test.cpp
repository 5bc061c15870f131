#include <gtest/gtest.h>

#include "nsel/core/pattern.hpp"

using nsel::fnmatch_case;
using nsel::PatternList;

TEST(FnmatchCase, DesignExamples) {
  EXPECT_TRUE(fnmatch_case("*policy*", "dtensor_policy_worker"));
  EXPECT_TRUE(fnmatch_case("*", "a/b"));       // '*' crosses '/'
  EXPECT_TRUE(fnmatch_case("*", ".hidden"));   // and leading '.'
  EXPECT_TRUE(fnmatch_case("?", "\xc3\xa9"));  // 'é' is one code point
  EXPECT_FALSE(fnmatch_case("??", "\xc3\xa9"));
  EXPECT_TRUE(fnmatch_case("[^a]", "^"));  // '^' is a literal member, not negation
  EXPECT_TRUE(fnmatch_case("[^a]", "a"));
  EXPECT_FALSE(fnmatch_case("[^a]", "b"));
  EXPECT_TRUE(fnmatch_case("[!]]", "a"));  // ']' right after '[!' is a member
  EXPECT_FALSE(fnmatch_case("[!]]", "]"));
  EXPECT_TRUE(fnmatch_case("[]]", "]"));
  EXPECT_TRUE(fnmatch_case("a\\b", "a\\b"));  // no escape character
  EXPECT_FALSE(fnmatch_case("a\\b", "ab"));
  EXPECT_FALSE(fnmatch_case("a\\*", "ab"));
  EXPECT_TRUE(fnmatch_case("a\\*", "a\\xyz"));
  EXPECT_TRUE(fnmatch_case("[", "["));  // unclosed '[' is literal
  EXPECT_TRUE(fnmatch_case("a[b", "a[b"));
  EXPECT_FALSE(fnmatch_case("[z-a]", "m"));  // reversed range matches nothing
  EXPECT_FALSE(fnmatch_case("[z-a]", "z"));
  EXPECT_FALSE(fnmatch_case("[[:alpha:]]", "a"));  // no POSIX classes: set "[:alph" then "]"
  EXPECT_TRUE(fnmatch_case("[[:alpha:]]", "a]"));
  EXPECT_TRUE(fnmatch_case("[[:alpha:]]", ":]"));
  EXPECT_FALSE(fnmatch_case("*POLICY*", "dtensor_policy_worker"));  // case-sensitive
}

TEST(FnmatchCase, SetsAndRanges) {
  EXPECT_TRUE(fnmatch_case("[a-c]x", "bx"));
  EXPECT_FALSE(fnmatch_case("[a-c]x", "dx"));
  EXPECT_TRUE(fnmatch_case("[!a-c]", "d"));
  EXPECT_FALSE(fnmatch_case("[!a-c]", "b"));
  EXPECT_TRUE(fnmatch_case("[a-]", "-"));
  EXPECT_TRUE(fnmatch_case("[-a]", "-"));
  EXPECT_TRUE(fnmatch_case("[!z-a]", "q"));  // negated empty set matches any one char
  EXPECT_TRUE(fnmatch_case("[a--b]", "b"));  // CPython drops the reversed 'a--' range
  EXPECT_FALSE(fnmatch_case("[a--b]", "a"));
  EXPECT_FALSE(fnmatch_case("[a--b]", "-"));
  EXPECT_TRUE(fnmatch_case("[\\-a]", "]"));  // range '\' to 'a'
}

TEST(FnmatchCase, StarsBacktrack) {
  EXPECT_TRUE(fnmatch_case("*a*b*c", "xxaxxbxxbxxc"));
  EXPECT_FALSE(fnmatch_case("*a*b*c", "xxaxxbxxbxxcx"));
  EXPECT_TRUE(fnmatch_case("**", ""));
  EXPECT_FALSE(fnmatch_case("?", ""));
  EXPECT_TRUE(fnmatch_case("", ""));
  EXPECT_FALSE(fnmatch_case("", "a"));
  EXPECT_TRUE(fnmatch_case("*\n", "a\n"));  // '*' matches across newlines too
}

TEST(PatternList, SplitsStripsAndDropsEmpty) {
  const PatternList list = PatternList::parse("  *policy* ,, *vllm*\t, ,");
  ASSERT_EQ(list.patterns().size(), 2u);
  EXPECT_EQ(list.patterns()[0], "*policy*");
  EXPECT_EQ(list.patterns()[1], "*vllm*");
  EXPECT_TRUE(PatternList::parse(" , ,").empty());
  // Python's str.strip() also removes non-ASCII white space such as U+00A0.
  EXPECT_EQ(PatternList::parse("\xc2\xa0x\xc2\xa0").patterns().at(0), "x");
}

TEST(PatternList, FirstMatchWins) {
  const PatternList list = PatternList::parse("*worker,*policy*");
  EXPECT_EQ(list.first_match("dtensor_policy_worker"), "*worker");
  EXPECT_EQ(PatternList::parse("*policy*,*worker").first_match("dtensor_policy_worker"),
            "*policy*");
  EXPECT_FALSE(list.first_match("something_else").has_value());
}
