#include "core/string_util.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(StringUtilTest, ParseInt64Canonical) {
  int64_t v = 0;
  EXPECT_TRUE(ParseInt64("0", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(ParseInt64("-12", &v));
  EXPECT_EQ(v, -12);
  EXPECT_TRUE(ParseInt64("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_TRUE(ParseInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_FALSE(ParseInt64("9223372036854775808", &v));
  EXPECT_FALSE(ParseInt64("+1", &v));
  EXPECT_FALSE(ParseInt64("01", &v));
  EXPECT_FALSE(ParseInt64(" 1", &v));
  EXPECT_FALSE(ParseInt64("1 ", &v));
  EXPECT_FALSE(ParseInt64("", &v));
  EXPECT_FALSE(ParseInt64("-", &v));
  EXPECT_FALSE(ParseInt64("-0", &v));
  EXPECT_FALSE(ParseInt64("1.0", &v));
  // Around the 18-digit fast path and the overflow checks of the long path.
  EXPECT_TRUE(ParseInt64("999999999999999999", &v));
  EXPECT_EQ(v, 999999999999999999LL);
  EXPECT_TRUE(ParseInt64("-999999999999999999", &v));
  EXPECT_EQ(v, -999999999999999999LL);
  EXPECT_TRUE(ParseInt64("1000000000000000000", &v));
  EXPECT_EQ(v, 1000000000000000000LL);
  EXPECT_FALSE(ParseInt64("99999999999999999999", &v));
  EXPECT_FALSE(ParseInt64("12345678901234567/", &v));
  EXPECT_FALSE(ParseInt64("1234567:", &v));
  EXPECT_FALSE(ParseInt64("-9223372036854775809", &v));
}

TEST(StringUtilTest, LongDoubleHumanFormat) {
  EXPECT_EQ(LongDoubleToHuman(10.5L + 0.1L), "10.6");
  EXPECT_EQ(LongDoubleToHuman(3.0L), "3");
  EXPECT_EQ(LongDoubleToHuman(5000.0L), "5000");
  EXPECT_EQ(LongDoubleToHuman(-0.0L), "0");
  EXPECT_EQ(LongDoubleToHuman(0.1L), "0.1");
}

TEST(StringUtilTest, ParseDoubleRejectsJunk) {
  double d = 0;
  EXPECT_TRUE(ParseDouble("1.5", &d));
  EXPECT_EQ(d, 1.5);
  EXPECT_TRUE(ParseDouble("5.0e3", &d));
  EXPECT_EQ(d, 5000);
  EXPECT_TRUE(ParseDouble("inf", &d));
  EXPECT_FALSE(ParseDouble("nan", &d));
  EXPECT_FALSE(ParseDouble(" 1", &d));
  EXPECT_FALSE(ParseDouble("1x", &d));
  EXPECT_FALSE(ParseDouble("", &d));
}

TEST(StringUtilTest, ParseMemoryUnits) {
  EXPECT_EQ(ParseMemory("1024"), 1024u);
  EXPECT_EQ(ParseMemory("1k"), 1000u);
  EXPECT_EQ(ParseMemory("1kb"), 1024u);
  EXPECT_EQ(ParseMemory("4GB"), 4ull << 30);
  EXPECT_EQ(ParseMemory("512mb"), 512ull << 20);
  EXPECT_FALSE(ParseMemory("12xb").has_value());
  EXPECT_FALSE(ParseMemory("").has_value());
  EXPECT_FALSE(ParseMemory("-1").has_value());
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(ConstantTimeEqualsTest, EqualOnlyWhenEveryByteAndTheLengthMatch) {
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_FALSE(ConstantTimeEquals("secreT", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("Secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secre", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secrets", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("x", ""));
  // A guess that repeats the secret's prefix cyclically is still a different length.
  EXPECT_FALSE(ConstantTimeEquals("ab", "abab"));
  EXPECT_TRUE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0b", 3)));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0c", 3), std::string("a\0b", 3)));
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(StringUtilReprTest, EscapesAsRedisSdscatrepr) {
  std::string out;
  static const char kIn[] = "a \"q\"\\\n\r\t\a\b\x01\xff~";
  AppendRepr(&out, std::string_view(kIn, sizeof(kIn) - 1));
  EXPECT_EQ(out, "\"a \\\"q\\\"\\\\\\n\\r\\t\\a\\b\\x01\\xff~\"");
  out.clear();
  AppendRepr(&out, "");
  EXPECT_EQ(out, "\"\"");
}

}  // namespace
}  // namespace strata
