#include "server/base/output_limits.h"

#include <gtest/gtest.h>

#include <string>

#include "server/base/config.h"

namespace strata {
namespace {

TEST(OutputLimitsTest, DefaultsAreRedis) {
  OutputLimits l;
  ASSERT_EQ(ParseOutputLimits(kDefaultOutputLimits, &l), "");
  EXPECT_EQ(RenderOutputLimits(l),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
}

TEST(OutputLimitsTest, SettingSomeClassesKeepsTheOthers) {
  OutputLimits l;
  ASSERT_EQ(ParseOutputLimits(kDefaultOutputLimits, &l), "");
  ASSERT_EQ(ParseOutputLimits("normal 1mb 512kb 10", &l), "");
  EXPECT_EQ(l.of[0].hard_bytes, 1048576);
  EXPECT_EQ(l.of[0].soft_bytes, 524288);
  EXPECT_EQ(l.of[0].soft_seconds, 10);
  ASSERT_EQ(ParseOutputLimits("SLAVE 1 2 3 PubSub 4 5 6", &l), "");
  EXPECT_EQ(RenderOutputLimits(l), "normal 1048576 524288 10 slave 1 2 3 pubsub 4 5 6");
  ASSERT_EQ(ParseOutputLimits("replica 7 8 9", &l), "");
  EXPECT_EQ(l.of[1].hard_bytes, 7);
}

TEST(OutputLimitsTest, RedisErrorsLeaveTheLimitsAsTheyWere) {
  OutputLimits l;
  ASSERT_EQ(ParseOutputLimits(kDefaultOutputLimits, &l), "");
  std::string before = RenderOutputLimits(l);
  EXPECT_EQ(ParseOutputLimits("foo 1 1 1", &l),
            "Invalid client class specified in buffer limit configuration.");
  EXPECT_EQ(ParseOutputLimits("normal 1 1", &l),
            "Wrong number of arguments in buffer limit configuration.");
  EXPECT_EQ(ParseOutputLimits("", &l), "Wrong number of arguments in buffer limit configuration.");
  EXPECT_EQ(ParseOutputLimits("normal x 1 1", &l),
            "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
  EXPECT_EQ(ParseOutputLimits("normal 1 1 -1", &l),
            "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
  // A bad group after a good one changes nothing either.
  EXPECT_NE(ParseOutputLimits("normal 5 5 5 pubsub 1 1", &l), "");
  EXPECT_EQ(RenderOutputLimits(l), before);
}

TEST(OutputLimitsTest, ConfigKeepsTheParsedLimitsAndRendersRedisForm) {
  Config c;
  EXPECT_EQ(c.output_limit(ClientClass::kNormal).hard_bytes, 0);
  EXPECT_EQ(c.output_limit(ClientClass::kPubSub).hard_bytes, 32 * 1024 * 1024);
  EXPECT_EQ(c.Set("client-output-buffer-limit", "normal 64mb 32mb 5", true), "");
  OutputLimit n = c.output_limit(ClientClass::kNormal);
  EXPECT_EQ(n.hard_bytes, 64 * 1024 * 1024);
  EXPECT_EQ(n.soft_bytes, 32 * 1024 * 1024);
  EXPECT_EQ(n.soft_seconds, 5);
  EXPECT_EQ(*c.Get("client-output-buffer-limit"),
            "normal 67108864 33554432 5 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
  EXPECT_NE(c.Set("client-output-buffer-limit", "normal 1 2", true), "");
  EXPECT_EQ(c.output_limit(ClientClass::kNormal).hard_bytes, 64 * 1024 * 1024);
  std::string err;
  ASSERT_TRUE(c.LoadFileText("client-output-buffer-limit pubsub 1mb 0 0\n", &err)) << err;
  EXPECT_EQ(c.output_limit(ClientClass::kPubSub).hard_bytes, 1024 * 1024);
}

TEST(OutputLimitsTest, MaxmemoryClientsInBytesOrPercent) {
  Config c;
  EXPECT_EQ(c.maxmemory_clients_bytes(), 0);
  EXPECT_EQ(c.Set("maxmemory-clients", "10mb", true), "");
  EXPECT_EQ(c.maxmemory_clients_bytes(), 10 * 1024 * 1024);
  EXPECT_EQ(*c.Get("maxmemory-clients"), "10485760");
  EXPECT_EQ(c.Set("maxmemory", "1000mb", true), "");
  EXPECT_EQ(c.Set("maxmemory-clients", "5%", true), "");
  EXPECT_EQ(*c.Get("maxmemory-clients"), "5%");
  EXPECT_EQ(c.maxmemory_clients_bytes(), 1000 * 1024 * 1024 / 100 * 5);
  EXPECT_EQ(c.Set("maxmemory-clients", "101%", true),
            "percentage argument must be less or equal to 100");
  EXPECT_EQ(c.Set("maxmemory-clients", "lots", true), "argument must be a memory or percent value");
}

}  // namespace
}  // namespace strata
