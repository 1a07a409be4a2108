#include "server/commands/arg_parsers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace strata {
namespace {

// The reply a failed parse wrote.
struct Reply {
  std::string out;
  ReplyBuilder rb{&out, 2};
};

TEST(ParseExpireArgTest, RelativeAndAbsoluteInEitherUnit) {
  Reply r;
  int64_t ms = 0;
  ASSERT_TRUE(ParseExpireArg("10", ExpireUnit::kSeconds, false, 1000, "expire", r.rb, &ms));
  EXPECT_EQ(ms, 11000);
  ASSERT_TRUE(ParseExpireArg("10", ExpireUnit::kMilliseconds, false, 1000, "pexpire", r.rb, &ms));
  EXPECT_EQ(ms, 1010);
  ASSERT_TRUE(ParseExpireArg("5", ExpireUnit::kSeconds, true, 1000, "expireat", r.rb, &ms));
  EXPECT_EQ(ms, 5000);
  EXPECT_TRUE(r.out.empty());
}

TEST(ParseExpireArgTest, RedisErrors) {
  int64_t ms = 0;
  Reply not_int;
  EXPECT_FALSE(ParseExpireArg("1.5", ExpireUnit::kSeconds, false, 0, "set", not_int.rb, &ms));
  EXPECT_EQ(not_int.out, "-ERR value is not an integer or out of range\r\n");
  Reply zero;
  EXPECT_FALSE(ParseExpireArg("0", ExpireUnit::kSeconds, false, 0, "SET", zero.rb, &ms));
  EXPECT_EQ(zero.out, "-ERR invalid expire time in 'set' command\r\n");
  Reply overflow;
  EXPECT_FALSE(
      ParseExpireArg("9223372036854776", ExpireUnit::kSeconds, false, 0, "set", overflow.rb, &ms));
  EXPECT_EQ(overflow.out, "-ERR invalid expire time in 'set' command\r\n");
  Reply past_end;
  EXPECT_FALSE(ParseExpireArg("9223372036854775807", ExpireUnit::kMilliseconds, false, 10, "set",
                              past_end.rb, &ms));
  EXPECT_EQ(past_end.out, "-ERR invalid expire time in 'set' command\r\n");
}

TEST(ParseBlockingTimeoutTest, SecondsAsAFloatRoundedUpToMilliseconds) {
  Reply r;
  int64_t ms = -1;
  ASSERT_TRUE(ParseBlockingTimeout("0", r.rb, &ms));
  EXPECT_EQ(ms, 0);
  ASSERT_TRUE(ParseBlockingTimeout("0.0015", r.rb, &ms));
  EXPECT_EQ(ms, 2);
  ASSERT_TRUE(ParseBlockingTimeout("2", r.rb, &ms));
  EXPECT_EQ(ms, 2000);
}

TEST(ParseBlockingTimeoutTest, RedisErrors) {
  int64_t ms = 0;
  Reply junk;
  EXPECT_FALSE(ParseBlockingTimeout("soon", junk.rb, &ms));
  EXPECT_EQ(junk.out, "-ERR timeout is not a float or out of range\r\n");
  Reply inf;
  EXPECT_FALSE(ParseBlockingTimeout("inf", inf.rb, &ms));
  EXPECT_EQ(inf.out, "-ERR timeout is not a float or out of range\r\n");
  Reply negative;
  EXPECT_FALSE(ParseBlockingTimeout("-1", negative.rb, &ms));
  EXPECT_EQ(negative.out, "-ERR timeout is negative\r\n");
  Reply huge;
  EXPECT_FALSE(ParseBlockingTimeout("1e300", huge.rb, &ms));
  EXPECT_EQ(huge.out, "-ERR timeout is out of range\r\n");
}

}  // namespace
}  // namespace strata
