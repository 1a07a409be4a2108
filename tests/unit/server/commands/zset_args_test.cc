#include "server/commands/zset_args.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace strata {
namespace {

TEST(ZSetArgsTest, ScoresAsRedisTakesThem) {
  double v = 0;
  EXPECT_TRUE(ParseZScore("1.5", &v));
  EXPECT_EQ(v, 1.5);
  EXPECT_TRUE(ParseZScore("-inf", &v));
  EXPECT_TRUE(std::isinf(v) && v < 0);
  EXPECT_FALSE(ParseZScore("nan", &v));
  EXPECT_FALSE(ParseZScore(" 1", &v));
  EXPECT_FALSE(ParseZScore("1 ", &v));
  EXPECT_FALSE(ParseZScore("", &v));
  EXPECT_FALSE(ParseZScore("1e400", &v));  // overflow
}

TEST(ZSetArgsTest, ScoreRangesWithExclusiveBounds) {
  ZScoreRange r;
  ASSERT_TRUE(ParseZScoreRange("(1", "5", &r));
  EXPECT_EQ(r.min, 1);
  EXPECT_TRUE(r.minex);
  EXPECT_EQ(r.max, 5);
  EXPECT_FALSE(r.maxex);
  ASSERT_TRUE(ParseZScoreRange("-inf", "(+inf", &r));
  EXPECT_TRUE(r.maxex);
  EXPECT_FALSE(ParseZScoreRange("a", "1", &r));
  EXPECT_FALSE(ParseZScoreRange("1", "(x", &r));
}

TEST(ZSetArgsTest, LexRanges) {
  ZLexRange r;
  ASSERT_TRUE(ParseZLexRange("[a", "(c", &r));
  EXPECT_EQ(r.min.kind, ZLexBound::kValue);
  EXPECT_FALSE(r.min.ex);
  EXPECT_EQ(r.min.value, "a");
  EXPECT_TRUE(r.max.ex);
  ASSERT_TRUE(ParseZLexRange("-", "+", &r));
  EXPECT_EQ(r.min.kind, ZLexBound::kMinusInf);
  EXPECT_EQ(r.max.kind, ZLexBound::kPlusInf);
  EXPECT_FALSE(ParseZLexRange("a", "[b", &r));
  EXPECT_FALSE(ParseZLexRange("[a", "+x", &r));
}

TEST(ZSetArgsTest, LongArgumentsReplyNotAnInteger) {
  std::string out;
  ReplyBuilder rb(&out, 2);
  int64_t v = 0;
  EXPECT_TRUE(ParseZLong("-12", rb, &v));
  EXPECT_EQ(v, -12);
  EXPECT_FALSE(ParseZLong("12abc", rb, &v));
  EXPECT_EQ(out, "-ERR value is not an integer or out of range\r\n");
}

}  // namespace
}  // namespace strata
