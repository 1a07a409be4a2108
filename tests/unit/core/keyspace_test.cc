#include "core/keyspace.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

TEST(KeyspaceTest, SetFindDelete) {
  Keyspace ks(16);
  ks.SetString(0, "a", "1", Entry::kNoExpire);
  ks.SetString(1, "a", "2", Entry::kNoExpire);
  EXPECT_EQ(ks.Find(0, "a", 0)->ValueString(), "1");
  EXPECT_EQ(ks.Find(1, "a", 0)->ValueString(), "2");
  EXPECT_EQ(ks.Find(2, "a", 0), nullptr);
  EXPECT_TRUE(ks.Delete(0, "a"));
  EXPECT_FALSE(ks.Delete(0, "a"));
  EXPECT_EQ(ks.DbSize(1), 1u);
}

TEST(KeyspaceTest, LazyExpiry) {
  Keyspace ks(1);
  ks.SetString(0, "t", "v", 1000);
  EXPECT_NE(ks.Find(0, "t", 999), nullptr);
  EXPECT_EQ(ks.ExpiresCount(0), 1u);
  EXPECT_EQ(ks.Find(0, "t", 1000), nullptr);
  EXPECT_EQ(ks.DbSize(0), 0u);
  EXPECT_EQ(ks.ExpiresCount(0), 0u);
  EXPECT_EQ(ks.stats().expired_keys, 1u);
}

TEST(KeyspaceTest, SetExpireAddsAndRemovesField) {
  Keyspace ks(1);
  ks.SetString(0, "k", "value", Entry::kNoExpire);
  Entry* e = ks.SetExpire(0, "k", 5000);
  EXPECT_EQ(e->ExpireMs(), 5000);
  EXPECT_EQ(e->ValueString(), "value");
  EXPECT_EQ(ks.ExpiresCount(0), 1u);
  e = ks.SetExpire(0, "k", Entry::kNoExpire);
  EXPECT_FALSE(e->HasExpire());
  EXPECT_EQ(ks.ExpiresCount(0), 0u);
}

TEST(KeyspaceTest, ActiveExpireIsBoundedAndReclaimsMemory) {
  Keyspace ks(2);
  size_t empty_bytes = ks.used_bytes();
  ASSERT_GT(empty_bytes, 0u);
  for (int i = 0; i < 10000; i++) {
    ks.SetString(i % 2, "k" + std::to_string(i), std::string(100, 'x'), 10);
  }
  ks.SetString(0, "forever", "v", Entry::kNoExpire);
  EXPECT_GT(ks.used_bytes(), empty_bytes + 10000 * 100);
  size_t deleted = ks.ActiveExpireCycle(20, 5);
  EXPECT_LT(deleted, 10000u);  // bounded: 5 buckets only
  for (int i = 0; i < 1000 && ks.ExpiresCount(0) + ks.ExpiresCount(1) > 0; i++) {
    ks.ActiveExpireCycle(20, 100);
  }
  EXPECT_EQ(ks.DbSize(0), 1u);
  EXPECT_EQ(ks.DbSize(1), 0u);
  EXPECT_EQ(ks.stats().expired_keys, 10000u);
  // Entries are freed; what remains is the (never shrinking) table directory and segments.
  size_t overhead = ks.table(0).OverheadBytes() + ks.table(1).OverheadBytes();
  EXPECT_LT(ks.used_bytes(), overhead + 1000);
}

TEST(KeyspaceTest, FlushAndSwap) {
  Keyspace ks(3);
  ks.SetString(0, "a", "1", Entry::kNoExpire);
  ks.SetString(2, "b", "2", Entry::kNoExpire);
  ks.SwapDb(0, 2);
  EXPECT_EQ(ks.Find(0, "b", 0)->ValueString(), "2");
  EXPECT_EQ(ks.Find(2, "a", 0)->ValueString(), "1");
  ks.FlushDb(0);
  EXPECT_EQ(ks.DbSize(0), 0u);
  EXPECT_EQ(ks.DbSize(2), 1u);
  ks.FlushAll();
  EXPECT_EQ(ks.DbSize(2), 0u);
}

// The change tracker belongs to the snapshot manager, which a server may destroy before
// its workers' keyspaces: destroying a keyspace must not report its keys as changed
// (it did, through a dangling pointer, and SHUTDOWN with save rules crashed on exit).
TEST(KeyspaceTest, DestructionIsNotReportedAsAChange) {
  struct CountingTracker : ChangeTracker {
    int* calls;
    explicit CountingTracker(int* c) : calls(c) {}
    void KeyChanged(uint32_t, uint64_t) override { ++*calls; }
    void DbChanged(uint32_t) override { ++*calls; }
  };
  int calls = 0;
  CountingTracker tracker(&calls);
  {
    Keyspace ks(2);
    ks.set_change_tracker(&tracker);
    ks.SetString(0, "a", "1", Entry::kNoExpire);
    ks.SetString(1, "b", "2", Entry::kNoExpire);
    EXPECT_EQ(calls, 2);
    calls = 0;
  }
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace strata
