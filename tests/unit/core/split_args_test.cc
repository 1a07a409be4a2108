#include "core/split_args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

std::vector<std::string> Split(std::string_view line) {
  std::vector<std::string> out;
  EXPECT_TRUE(SplitArgs(line, &out)) << line;
  return out;
}

bool Fails(std::string_view line) {
  std::vector<std::string> out;
  return !SplitArgs(line, &out);
}

TEST(SplitArgs, WhitespaceSeparatedWords) {
  EXPECT_EQ(Split("set  k\tv\r\n"), (std::vector<std::string>{"set", "k", "v"}));
  EXPECT_TRUE(Split("").empty());
  EXPECT_TRUE(Split("   \t ").empty());
}

TEST(SplitArgs, DoubleQuotesTakeEscapes) {
  EXPECT_EQ(Split(R"("a b" "\n\r\t\b\a\\\"" "\x41\x7a")"),
            (std::vector<std::string>{"a b", "\n\r\t\b\a\\\"", "Az"}));
  // An incomplete hex escape is taken literally, as sdssplitargs does.
  EXPECT_EQ(Split(R"("\x4")"), (std::vector<std::string>{"x4"}));
  EXPECT_EQ(Split(R"("")"), (std::vector<std::string>{""}));
}

TEST(SplitArgs, SingleQuotesTakeOnlyEscapedQuote) {
  EXPECT_EQ(Split(R"('it\'s' '\n')"), (std::vector<std::string>{"it's", "\\n"}));
}

TEST(SplitArgs, AppendsToOutput) {
  std::vector<std::string> out{"first"};
  ASSERT_TRUE(SplitArgs("second third", &out));
  EXPECT_EQ(out, (std::vector<std::string>{"first", "second", "third"}));
}

TEST(SplitArgs, RefusesUnbalancedQuotes) {
  EXPECT_TRUE(Fails(R"("abc)"));
  EXPECT_TRUE(Fails(R"('abc)"));
  // A closing quote must be followed by whitespace or the end of the line.
  EXPECT_TRUE(Fails(R"("a"b)"));
  EXPECT_TRUE(Fails(R"('a'b)"));
}

}  // namespace
}  // namespace strata
