#include "server/engine/shard_groups.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/hash.h"

namespace strata {
namespace {

TEST(ShardGroupsTest, GroupsKeysByShardInIncreasingOrder) {
  const uint32_t shards = 4;
  std::vector<std::string_view> keys = {"a", "b", "c", "d", "e", "f", "g", "h"};
  ShardGroups g = GroupByShard(keys, 0, shards, true, 0);
  ASSERT_EQ(g.shards.size(), g.positions.size());
  ASSERT_EQ(g.shards.size(), g.locks.size());
  size_t seen = 0;
  for (size_t i = 0; i < g.shards.size(); i++) {
    if (i > 0) {
      EXPECT_LT(g.shards[i - 1], g.shards[i]);
    }
    EXPECT_EQ(g.IndexOf(g.shards[i]), i);
    EXPECT_TRUE(g.locks[i].exclusive);
    for (size_t p : g.positions[i]) {
      EXPECT_EQ(ShardOfKey(keys[p], shards), g.shards[i]) << keys[p];
      seen++;
    }
    EXPECT_EQ(g.locks[i].keys.size(), g.positions[i].size());
  }
  EXPECT_EQ(seen, keys.size());
}

TEST(ShardGroupsTest, ARepeatedKeyIsLockedOnceButKeepsEveryPosition) {
  std::vector<std::string_view> keys = {"k", "k", "k"};
  ShardGroups g = GroupByShard(keys, 3, 2, false, 0);
  ASSERT_EQ(g.shards.size(), 1u);
  EXPECT_EQ(g.positions[0], (std::vector<size_t>{0, 1, 2}));
  ASSERT_EQ(g.locks[0].keys.size(), 1u);
  EXPECT_EQ(g.locks[0].keys[0], LockTable::LockKey(3, "k"));
  EXPECT_FALSE(g.locks[0].exclusive);
}

// Groups small enough for the scan and big enough for the table: every position kept,
// each lock key once, in the order of first appearance. The thread's table is reused from
// call to call, after bigger and smaller groups, and a group too big for it (over 4096
// positions) has one of its own.
TEST(ShardGroupsTest, RepeatedKeysAreLockedOnceInSmallAndLargeGroups) {
  for (size_t distinct : {1u, 5u, 16u, 17u, 200u, 17u, 200u, 1500u, 15000u, 40u, 1500u}) {
    std::vector<std::string> names;
    for (size_t i = 0; i < distinct; i++) names.push_back("key:" + std::to_string(i));
    std::vector<std::string_view> keys;
    for (int round = 0; round < 3; round++) {
      for (const std::string& n : names) keys.push_back(n);
    }
    ShardGroups g = GroupByShard(keys, 0, 3, true, 0);
    size_t positions = 0, locked = 0;
    for (size_t i = 0; i < g.shards.size(); i++) {
      positions += g.positions[i].size();
      locked += g.locks[i].keys.size();
      ASSERT_EQ(g.locks[i].keys.size(), g.locks[i].names.size());
      for (size_t j = 0; j < g.locks[i].keys.size(); j++) {
        EXPECT_EQ(g.locks[i].keys[j], LockTable::LockKey(0, g.locks[i].names[j]));
        EXPECT_EQ(ShardOfKey(g.locks[i].names[j], 3), g.shards[i]);
      }
      // First appearances, in order: the first third of the positions.
      for (size_t j = 0; j < g.locks[i].names.size(); j++) {
        EXPECT_EQ(keys[g.positions[i][j]], g.locks[i].names[j]);
      }
    }
    EXPECT_EQ(positions, keys.size()) << distinct;
    EXPECT_EQ(locked, distinct) << distinct;
  }
}

TEST(ShardGroupsTest, OneShardTakesEverything) {
  std::vector<std::string_view> keys = {"x", "y"};
  ShardGroups g = GroupByShard(keys, 0, 1, true, 0);
  EXPECT_EQ(g.shards, (std::vector<uint32_t>{0}));
  EXPECT_EQ(g.positions[0], (std::vector<size_t>{0, 1}));
}

}  // namespace
}  // namespace strata
