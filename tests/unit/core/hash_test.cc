#include "core/hash.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

TEST(HashTest, HashTagFollowsRedisClusterRule) {
  EXPECT_EQ(HashTag("{user1000}.following"), "user1000");
  EXPECT_EQ(HashTag("foo{}{bar}"), "foo{}{bar}");  // empty first tag: whole key
  EXPECT_EQ(HashTag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(HashTag("foo{bar}{zap}"), "bar");
  EXPECT_EQ(HashTag("nobraces"), "nobraces");
  EXPECT_EQ(HashTag("open{only"), "open{only");
}

// HashTag scans for '{' a word at a time, the last word overlapping: every length up to
// a few words, with the braces at every position (and a second '{' after the first),
// against the rule written plainly.
TEST(HashTest, HashTagMatchesThePlainRuleAtEveryLengthAndPosition) {
  auto plain = [](std::string_view key) -> std::string_view {
    size_t open = key.find('{');
    if (open == std::string_view::npos) return key;
    size_t close = key.find('}', open + 1);
    if (close == std::string_view::npos || close == open + 1) return key;
    return key.substr(open + 1, close - open - 1);
  };
  for (size_t n = 0; n <= 40; n++) {
    std::string base(n, 'a');
    for (size_t i = 0; i < n; i++) base[i] = static_cast<char>('a' + i % 26);
    EXPECT_EQ(HashTag(base), plain(base));
    for (size_t open = 0; open < n; open++) {
      std::string k = base;
      k[open] = '{';
      EXPECT_EQ(HashTag(k), plain(k)) << k;
      for (size_t close = open + 1; close < n; close++) {
        std::string t = k;
        t[close] = '}';
        ASSERT_EQ(HashTag(t), plain(t)) << t;
        if (close + 1 < n) {
          t[close + 1] = '{';
          ASSERT_EQ(HashTag(t), plain(t)) << t;
        }
      }
    }
    // Bytes that differ from '{' by one bit or by a borrow.
    for (char c : {'z', '|', '\x7a', '\xfb', '\x00', '\x01'}) {
      std::string k(n, c);
      EXPECT_EQ(HashTag(k), plain(k));
      for (size_t open = 0; open < n; open++) {
        std::string t = k;
        t[open] = '{';
        if (open + 2 < n) t[open + 2] = '}';
        ASSERT_EQ(HashTag(t), plain(t)) << open;
      }
    }
  }
}

// ShardHash looks for a '{' with overlapping word loads before it looks for the tag: a
// key with a brace at any position and length hashes its tag, one without hashes whole.
TEST(HashTest, ShardHashFindsTheBraceAtEveryLengthAndPosition) {
  for (size_t n = 0; n <= 40; n++) {
    std::string base(n, 'x');
    EXPECT_EQ(ShardHash(base), TableHash(base));
    EXPECT_EQ(ShardHashOf(base, TableHash(base)), ShardHash(base));
    for (size_t open = 0; open + 2 < n; open++) {
      std::string k = base;
      k[open] = '{';
      k[n - 1] = '}';
      EXPECT_EQ(ShardHash(k), TableHash(HashTag(k))) << k;
      EXPECT_EQ(ShardHashOf(k, TableHash(k)), ShardHash(k)) << k;
      EXPECT_NE(HashTag(k), k) << k;
    }
  }
}

TEST(HashTest, KeysWithSameTagShareAShard) {
  for (uint32_t n : {2u, 3u, 7u, 16u}) {
    EXPECT_EQ(ShardOfKey("{u1}.a", n), ShardOfKey("{u1}.b", n));
    EXPECT_EQ(ShardOfKey("{u1}.a", n), ShardOfKey("u1", n));
  }
}

TEST(HashTest, ShardsAreBalanced) {
  constexpr uint32_t kShards = 4;
  std::vector<int> counts(kShards);
  for (int i = 0; i < 40000; i++) counts[ShardOfKey("key:" + std::to_string(i), kShards)]++;
  for (int c : counts) {
    EXPECT_GT(c, 9000);
    EXPECT_LT(c, 11000);
  }
}

TEST(HashTest, SingleShardIsZero) { EXPECT_EQ(ShardOfKey("anything", 1), 0u); }

}  // namespace
}  // namespace strata
