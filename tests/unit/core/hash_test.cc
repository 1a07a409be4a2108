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
