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
// Both ways of computing the CRC (carry-less multiplication, tables) agree with the byte-at-a-time
// definition at every length and offset.
TEST(KeySlotTest, SlicedCrcMatchesTheBytewiseOne) {
  auto bytewise = [](std::string_view d) {
    uint32_t crc = 0;
    for (unsigned char c : d) {
      crc ^= static_cast<uint32_t>(c) << 8;
      for (int i = 0; i < 8; i++) crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) : (crc << 1);
      crc &= 0xffff;
    }
    return static_cast<uint16_t>(crc);
  };
  std::string s;
  uint32_t x = 12345;
  for (int i = 0; i < 300; i++) {
    x = x * 1103515245u + 12345u;
    s += static_cast<char>(x >> 16);
  }
  for (size_t off = 0; off < 17; off++) {
    for (size_t len = 0; off + len <= s.size(); len += len < 80 ? 1 : 1 + len / 8) {
      std::string_view d(s.data() + off, len);
      ASSERT_EQ(Crc16(d), bytewise(d)) << off << " " << len;
      ASSERT_EQ(Crc16Portable(d), bytewise(d)) << off << " " << len;
    }
  }
}

TEST(KeySlotTest, SlotsMatchRedis) {
  EXPECT_EQ(KeySlot("123456789"), 12739u);
  EXPECT_EQ(KeySlot("foo"), 12182u);
  EXPECT_EQ(KeySlot("bar"), 5061u);
  EXPECT_EQ(KeySlot("somekey"), 11058u);
  EXPECT_EQ(KeySlot("hello"), 866u);
  EXPECT_EQ(KeySlot(""), 0u);
  EXPECT_EQ(KeySlot(std::string("\0\xff\x80", 3)), Crc16(std::string("\0\xff\x80", 3)) & 16383u);
}

// The one-pass slot (whole-key CRC, looking for '{' on the way) agrees with the tag's
// CRC wherever the braces fall: in the leading bytes, in an 8- or 16-byte block, or
// nowhere.
TEST(KeySlotTest, OnePassSlotMatchesTheTagsCrc) {
  const char* parts[] = {"", "{", "}", "{}", "a", "user:1000:", "{tag}", "x{y}z"};
  for (const char* a : parts) {
    for (const char* b : parts) {
      for (const char* c : parts) {
        for (size_t pad = 0; pad < 34; pad++) {
          std::string key = std::string(pad, 'p') + a + b + c;
          ASSERT_EQ(KeySlot(key), Crc16(HashTag(key)) & (kClusterSlots - 1)) << key;
        }
      }
    }
  }
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
