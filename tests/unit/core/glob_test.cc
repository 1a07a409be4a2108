#include "core/glob.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(GlobTest, Basics) {
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("*", "abc"));
  EXPECT_TRUE(GlobMatch("a*", "abc"));
  EXPECT_FALSE(GlobMatch("b*", "abc"));
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_FALSE(GlobMatch("h?llo", "hllo"));
  EXPECT_TRUE(GlobMatch("h*llo", "heeeello"));
  EXPECT_TRUE(GlobMatch("*o", "hello"));
  EXPECT_FALSE(GlobMatch("", "a"));
  EXPECT_TRUE(GlobMatch("", ""));
}

TEST(GlobTest, Classes) {
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hillo"));
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[a-b]llo", "hbllo"));
  EXPECT_TRUE(GlobMatch("h[b-a]llo", "hallo"));  // reversed range
  EXPECT_FALSE(GlobMatch("h[a-b]llo", "hcllo"));
}

TEST(GlobTest, Escapes) {
  EXPECT_TRUE(GlobMatch("a\\*b", "a*b"));
  EXPECT_FALSE(GlobMatch("a\\*b", "axb"));
  EXPECT_TRUE(GlobMatch("a[\\]]b", "a]b"));
}

TEST(GlobTest, NoCase) {
  EXPECT_TRUE(GlobMatch("HELLO*", "hello world", true));
  EXPECT_FALSE(GlobMatch("HELLO*", "hello world", false));
}

TEST(GlobTest, PathologicalPatternIsFast) {
  std::string text(2000, 'a');
  std::string pattern;
  for (int i = 0; i < 30; i++) pattern += "*a";
  pattern += "b";
  EXPECT_FALSE(GlobMatch(pattern, text));
}

}  // namespace
}  // namespace strata
