#include "core/slot_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/keyspace.h"
#include "tests/unit/scaled.h"

namespace strata {
namespace {

std::multiset<uint64_t> Hashes(const SlotIndex& idx, uint32_t slot) {
  std::multiset<uint64_t> out;
  idx.ForEachHash(slot, [&](uint64_t h) {
    out.insert(h);
    return true;
  });
  return out;
}

// Random adds and removes against a model: counts, distinct hashes, and memory that
// returns to the headers alone when every key is gone.
TEST(SlotIndexTest, MatchesAModelUnderRandomChurn) {
  SlotIndex idx;
  size_t empty_bytes = idx.Bytes();
  std::map<uint32_t, std::multiset<uint64_t>> model;
  std::mt19937_64 rng(7);
  std::vector<std::pair<uint32_t, uint64_t>> live;
  for (int step = 0; step < test_scale::Steps(200000); step++) {
    bool add = live.empty() || rng() % 3 != 0;
    if (add) {
      uint32_t slot = static_cast<uint32_t>(rng() % 8);  // few slots: long probe runs
      // Some hashes collide on their low bits (same home) and some repeat exactly.
      uint64_t h = rng() % 4 == 0 ? (rng() % 16) << 40 | 5 : rng() | 1;
      if (rng() % 50 == 0 && !live.empty()) h = live[rng() % live.size()].second;
      if (rng() % 1000 == 0) h = 0;
      idx.Add(slot, h);
      model[slot].insert(h);
      live.emplace_back(slot, h);
    } else {
      size_t i = rng() % live.size();
      auto [slot, h] = live[i];
      live[i] = live.back();
      live.pop_back();
      idx.Remove(slot, h);
      model[slot].erase(model[slot].find(h));
    }
    if (step % 997 == 0) {
      for (auto& [slot, hs] : model) {
        ASSERT_EQ(idx.Count(slot), hs.size());
        std::set<uint64_t> distinct(hs.begin(), hs.end());
        std::multiset<uint64_t> got = Hashes(idx, slot);
        ASSERT_EQ(std::multiset<uint64_t>(distinct.begin(), distinct.end()), got);
      }
    }
  }
  EXPECT_EQ(idx.total(), live.size());
  for (auto [slot, h] : live) idx.Remove(slot, h);
  EXPECT_EQ(idx.total(), 0u);
  for (uint32_t s = 0; s < 8; s++) EXPECT_EQ(idx.Count(s), 0u);
  EXPECT_EQ(idx.Bytes(), empty_bytes);
}

TEST(SlotIndexTest, ForEachHashStopsWhenAsked) {
  SlotIndex idx;
  for (uint64_t h = 1; h <= 100; h++) idx.Add(42, h * 0x9E3779B97F4A7C15ull);
  int seen = 0;
  idx.ForEachHash(42, [&](uint64_t) { return ++seen < 10; });
  EXPECT_EQ(seen, 10);
  EXPECT_EQ(idx.Count(41), 0u);
  idx.Clear();
  EXPECT_EQ(idx.Count(42), 0u);
  EXPECT_EQ(idx.total(), 0u);
}

std::vector<std::string> KeysIn(const Keyspace& ks, uint32_t slot) {
  std::vector<std::string> out;
  ks.ForEachKeyInSlot(slot, [&](Entry* e) {
    out.emplace_back(e->Key());
    return true;
  });
  std::sort(out.begin(), out.end());
  return out;
}

// Every way a key comes and goes in database 0 keeps the index true: set, overwrite,
// delete, lazy and active expiry, flush, and keys other databases hold are left out.
TEST(SlotIndexTest, KeyspaceKeepsItsIndexTrue) {
  Keyspace ks(2);
  ks.SetString(0, "before", "v", Entry::kNoExpire);  // indexed when the index is turned on
  ks.EnableSlotIndex();
  const SlotIndex& idx = *ks.slot_index();
  EXPECT_EQ(idx.Count(KeySlot("before")), 1u);

  // "{user1}a" and "{user1}b" share a slot.
  uint32_t slot = KeySlot("{user1}");
  ks.SetString(0, "{user1}a", "1", Entry::kNoExpire);
  ks.SetString(0, "{user1}b", "2", Entry::kNoExpire);
  ks.SetString(0, "{user1}b", "22", Entry::kNoExpire);  // overwrite: still one key
  ks.SetString(1, "{user1}c", "3", Entry::kNoExpire);   // another database: not indexed
  EXPECT_EQ(idx.Count(slot), 2u);
  EXPECT_EQ(KeysIn(ks, slot), (std::vector<std::string>{"{user1}a", "{user1}b"}));

  EXPECT_TRUE(ks.Delete(0, "{user1}a"));
  EXPECT_EQ(KeysIn(ks, slot), (std::vector<std::string>{"{user1}b"}));

  ks.SetString(0, "{user1}t1", "v", 1000);
  ks.SetString(0, "{user1}t2", "v", 1000);
  EXPECT_EQ(idx.Count(slot), 3u);
  // Listed while expired and not yet deleted, as Redis's slot index does.
  EXPECT_EQ(KeysIn(ks, slot).size(), 3u);
  EXPECT_EQ(ks.Find(0, "{user1}t1", 2000), nullptr);  // lazy expiry
  EXPECT_EQ(idx.Count(slot), 2u);
  EXPECT_EQ(ks.ActiveExpireCycle(2000, 1000), 1u);  // active expiry
  EXPECT_EQ(idx.Count(slot), 1u);

  for (int i = 0; i < 5000; i++) ks.SetString(0, "k" + std::to_string(i), "v", Entry::kNoExpire);
  size_t with = 0;
  for (uint32_t s = 0; s < kClusterSlots; s++) with += idx.Count(s);
  EXPECT_EQ(with, ks.DbSize(0));
  EXPECT_EQ(idx.total(), ks.DbSize(0));
  EXPECT_GT(ks.table_bytes(), idx.Bytes());

  ks.FlushDb(0, /*lazy=*/true);
  EXPECT_EQ(idx.total(), 0u);
  ks.SetString(0, "after", "v", Entry::kNoExpire);
  EXPECT_EQ(KeysIn(ks, KeySlot("after")), (std::vector<std::string>{"after"}));

  // Should database 0 be swapped, the index follows the keys that are there now.
  ks.SwapDb(0, 1);
  EXPECT_EQ(idx.total(), 1u);
  EXPECT_EQ(KeysIn(ks, slot), (std::vector<std::string>{"{user1}c"}));
}

}  // namespace
}  // namespace strata
