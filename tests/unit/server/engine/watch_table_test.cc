#include "server/engine/watch_table.h"

#include <gtest/gtest.h>

#include "core/entry.h"
#include "core/keyspace.h"

namespace strata {
namespace {

constexpr int64_t kNow = 1'000'000;

TEST(WatchTableTest, AWriteMarksEveryWatcherOfTheKeyAndOnlyThem) {
  Keyspace ks(4);
  WatchTable t(ks);
  ks.SetString(0, "k", "v", Entry::kNoExpire);
  t.Watch(1, 0, "k", kNow);
  t.Watch(2, 0, "k", kNow);
  t.Watch(3, 0, "other", kNow);
  t.Watch(4, 1, "k", kNow);  // the same name in another database
  EXPECT_FALSE(t.Changed(1, kNow));
  ks.SetString(0, "k", "w", Entry::kNoExpire);
  EXPECT_TRUE(t.Changed(1, kNow));
  EXPECT_TRUE(t.Changed(2, kNow));
  EXPECT_FALSE(t.Changed(3, kNow));
  EXPECT_FALSE(t.Changed(4, kNow));
}

TEST(WatchTableTest, ReadsDoNotCountAndWriteLookupsDo) {
  Keyspace ks(1);
  WatchTable t(ks);
  ks.SetString(0, "k", "v", Entry::kNoExpire);
  t.Watch(1, 0, "k", kNow);
  ASSERT_NE(ks.FindRead(0, "k", kNow), nullptr);
  ks.FindMeta(0, "k", kNow);
  EXPECT_FALSE(t.Changed(1, kNow));
  EXPECT_EQ(ks.Find(0, "missing", kNow), nullptr);  // a write lookup that finds nothing
  EXPECT_FALSE(t.Changed(1, kNow));
  ASSERT_NE(ks.Find(0, "k", kNow), nullptr);
  EXPECT_TRUE(t.Changed(1, kNow));
}

TEST(WatchTableTest, CreatingAnAbsentKeyAndDeletingAndExpiringCount) {
  Keyspace ks(1);
  WatchTable t(ks);
  t.Watch(1, 0, "new", kNow);
  ks.SetString(0, "new", "v", Entry::kNoExpire);
  EXPECT_TRUE(t.Changed(1, kNow));
  ks.SetString(0, "d", "v", Entry::kNoExpire);
  t.Watch(2, 0, "d", kNow);
  EXPECT_TRUE(ks.Delete(0, "d"));
  EXPECT_TRUE(t.Changed(2, kNow));
  ks.SetString(0, "e", "v", Entry::kNoExpire);
  t.Watch(3, 0, "e", kNow);
  ks.SetExpire(0, "e", kNow + 100);
  EXPECT_TRUE(t.Changed(3, kNow));
}

// Alive at WATCH, expired at EXEC: changed, even before anything deletes it.
TEST(WatchTableTest, AKeyThatExpiresSinceWatchIsChanged) {
  Keyspace ks(1);
  WatchTable t(ks);
  ks.SetString(0, "k", "v", kNow + 50);
  t.Watch(1, 0, "k", kNow);
  EXPECT_FALSE(t.Changed(1, kNow + 10));
  EXPECT_TRUE(t.Changed(1, kNow + 60));
}

// Already expired at WATCH: deleting it (expiry, DEL, FLUSHDB) changes nothing; setting it
// again does.
TEST(WatchTableTest, StaleKeysFollowRedisRules) {
  Keyspace ks(1);
  WatchTable t(ks);
  ks.SetString(0, "s", "v", kNow - 1);
  t.Watch(1, 0, "s", kNow);
  EXPECT_FALSE(t.Changed(1, kNow));
  EXPECT_EQ(ks.FindRead(0, "s", kNow), nullptr);  // lazy expiry deletes it
  EXPECT_FALSE(t.Changed(1, kNow));
  ks.SetString(0, "s", "again", Entry::kNoExpire);
  EXPECT_TRUE(t.Changed(1, kNow));

  ks.SetString(0, "f", "v", kNow - 1);
  t.Watch(2, 0, "f", kNow);
  ks.FlushDb(0);
  EXPECT_FALSE(t.Changed(2, kNow));
}

TEST(WatchTableTest, FlushTouchesOnlyKeysThatExist) {
  Keyspace ks(2);
  WatchTable t(ks);
  ks.SetString(0, "here", "v", Entry::kNoExpire);
  t.Watch(1, 0, "here", kNow);
  t.Watch(2, 0, "absent", kNow);
  t.Watch(3, 1, "here", kNow);
  ks.FlushDb(0);
  EXPECT_TRUE(t.Changed(1, kNow));
  EXPECT_FALSE(t.Changed(2, kNow));
  EXPECT_FALSE(t.Changed(3, kNow));
}

TEST(WatchTableTest, SwapTouchesKeysPresentInEitherDatabase) {
  Keyspace ks(3);
  WatchTable t(ks);
  ks.SetString(1, "only-in-1", "v", Entry::kNoExpire);
  t.Watch(1, 0, "only-in-1", kNow);  // absent in 0, present in 1: appears after the swap
  t.Watch(2, 0, "nowhere", kNow);
  ks.SetString(2, "in-2", "v", Entry::kNoExpire);
  t.Watch(3, 2, "in-2", kNow);  // db 2 is not swapped
  ks.SwapDb(0, 1);
  EXPECT_TRUE(t.Changed(1, kNow));
  EXPECT_FALSE(t.Changed(2, kNow));
  EXPECT_FALSE(t.Changed(3, kNow));
}

TEST(WatchTableTest, UnwatchForgetsAndTheHookGoesWithTheLastKey) {
  Keyspace ks(1);
  WatchTable t(ks);
  t.Watch(1, 0, "k", kNow);
  t.Watch(1, 0, "k", kNow);  // twice: one record
  EXPECT_EQ(t.watched_keys(), 1u);
  t.Unwatch(1);
  EXPECT_TRUE(t.empty());
  ks.SetString(0, "k", "v", Entry::kNoExpire);  // no hook left to call
  EXPECT_FALSE(t.Changed(1, kNow));
  t.Watch(2, 0, "k", kNow);
  ks.SetString(0, "k", "w", Entry::kNoExpire);
  EXPECT_TRUE(t.Changed(2, kNow));
  t.Unwatch(2);
  EXPECT_FALSE(t.Changed(2, kNow));  // a new WATCH starts clean
}

}  // namespace
}  // namespace strata
