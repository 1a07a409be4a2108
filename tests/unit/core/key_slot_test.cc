#include "core/key_slot.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

TEST(KeySlotTest, Crc16IsXmodem) {
  EXPECT_EQ(Crc16("123456789"), 0x31C3);
  EXPECT_EQ(Crc16(""), 0);
}

// The expected slots are what redis-server 7's CLUSTER KEYSLOT answers.
TEST(KeySlotTest, SlotsMatchRedis) {
  EXPECT_EQ(KeySlot("123456789"), 12739u);
  EXPECT_EQ(KeySlot("foo"), 12182u);
  EXPECT_EQ(KeySlot("bar"), 5061u);
  EXPECT_EQ(KeySlot("somekey"), 11058u);
  EXPECT_EQ(KeySlot("hello"), 866u);
  EXPECT_EQ(KeySlot(""), 0u);
  EXPECT_EQ(KeySlot(std::string("\0\xff\x80", 3)), Crc16(std::string("\0\xff\x80", 3)) & 16383u);
}

TEST(KeySlotTest, HashTagsAsRedisReadsThem) {
  EXPECT_EQ(KeySlot("{user1000}.following"), 3443u);
  EXPECT_EQ(KeySlot("{user1000}.followers"), 3443u);
  EXPECT_EQ(HashTag("{user1000}.following"), "user1000");
  // An empty tag hashes the whole key; only the first '{' and the first '}' after it count.
  EXPECT_EQ(HashTag("foo{}{bar}"), "foo{}{bar}");
  EXPECT_EQ(KeySlot("foo{}{bar}"), 8363u);
  EXPECT_EQ(HashTag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(KeySlot("foo{{bar}}zap"), 4015u);
  EXPECT_EQ(HashTag("foo{bar}{zap}"), "bar");
  EXPECT_EQ(KeySlot("foo{bar}{zap}"), 5061u);
  EXPECT_EQ(KeySlot("{}"), 15257u);
  EXPECT_EQ(KeySlot("a{b"), 13340u);
  EXPECT_EQ(HashTag("a}b{c"), "a}b{c");
}

}  // namespace
}  // namespace strata
