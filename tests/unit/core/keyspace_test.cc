#include "core/keyspace.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "core/slab.h"

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

// PrefetchKeys is a hint: any keys, any count, a small table or a big one; what the
// lookups then find is unchanged.
TEST(KeyspaceTest, PrefetchKeysIsOnlyAHint) {
  Keyspace ks(1);
  std::vector<std::string> names;
  for (size_t i = 0; i < Keyspace::kLookaheadMinKeys + 100; i++) {
    names.push_back("k:" + std::to_string(i));
    if (i == 10) ks.PrefetchKeys(0, nullptr, 0);  // small table: nothing to do
    ks.SetString(0, names.back(), "v", Entry::kNoExpire);
  }
  std::string long_key(Keyspace::kLookaheadKeyMax + 1, 'x');
  std::vector<std::string_view> keys = {"", long_key, "missing"};
  for (size_t i = 0; i < 40; i++) keys.push_back(names[i * 7]);
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, keys.size()}) {
    ks.PrefetchKeys(0, keys.data(), n);
    for (size_t i = 0; i < n; i++) {
      bool stored = i >= 3;
      EXPECT_EQ(ks.Find(0, keys[i], 0) != nullptr, stored) << keys[i];
    }
  }
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

// On a replica an expired key goes only by its master's DEL: reads see it missing but
// keep it, the master's own commands (MasterCallScope) see it live, and a write lookup
// (a writable replica's own write) deletes it.
TEST(KeyspaceTest, ReplicaKeepsExpiredKeysForItsMaster) {
  Keyspace ks(1);
  std::atomic<bool> replica{true};
  ks.set_replica_flag(&replica);
  ks.SetString(0, "k", "v", 1000);
  ks.SetString(0, "other", "v", Entry::kNoExpire);
  EXPECT_EQ(ks.FindMeta(0, "k", 2000), nullptr);
  EXPECT_EQ(ks.FindNoTouch(0, "k", 2000), nullptr);
  EXPECT_EQ(ks.DbSize(0), 2u);
  size_t seen = 0;
  uint64_t cursor = 0;
  do {
    cursor = ks.ScanBucket(0, cursor, 2000, [&](Entry* e) {
      EXPECT_EQ(e->Key(), "other");
      seen++;
    });
  } while (cursor != 0);
  EXPECT_EQ(seen, 1u);
  EXPECT_EQ(ks.DbSize(0), 2u);
  for (uint64_t seed = 0; seed < 20; seed++) {
    Entry* e = ks.RandomKey(0, 2000, seed);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->Key(), "other");
  }
  {
    Keyspace::MasterCallScope master(ks, true);
    Entry* e = ks.Find(0, "k", 2000);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(ks.DbSize(0), 2u);
  }
  EXPECT_EQ(ks.FindMeta(0, "k", 2000), nullptr);  // the scope ended
  EXPECT_EQ(ks.Find(0, "k", 2000), nullptr);      // a write lookup: deleted
  EXPECT_EQ(ks.DbSize(0), 1u);
  // A master deletes on any lookup.
  replica = false;
  ks.SetString(0, "k", "v", 1000);
  EXPECT_EQ(ks.FindMeta(0, "k", 2000), nullptr);
  EXPECT_EQ(ks.DbSize(0), 1u);
}

// While clients are paused a master's dataset stays as it is (Redis's expireIfNeeded):
// reads see an expired key missing but keep it, and no expiry is counted; once the
// pause ends the next read deletes it.
TEST(KeyspaceTest, APausedMasterKeepsTheExpiredKeysItReads) {
  Keyspace ks(1);
  ks.SetString(0, "k", "v", 1000);
  ks.SetString(0, "other", "v", Entry::kNoExpire);
  ks.set_pause_hold(true);
  EXPECT_EQ(ks.FindMeta(0, "k", 2000), nullptr);
  EXPECT_EQ(ks.FindRead(0, "k", 2000), nullptr);
  for (uint64_t seed = 0; seed < 20; seed++) {
    Entry* e = ks.RandomKey(0, 2000, seed);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->Key(), "other");
  }
  EXPECT_EQ(ks.DbSize(0), 2u);
  EXPECT_EQ(ks.stats().expired_keys, 0u);
  ks.set_pause_hold(false);
  EXPECT_EQ(ks.FindMeta(0, "k", 2000), nullptr);
  EXPECT_EQ(ks.DbSize(0), 1u);
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

TEST(KeyspaceTest, ActiveExpireEstimatesTheStaleShareOfKeysWithATtl) {
  Keyspace ks(1);
  for (int i = 0; i < 100; i++) {
    // Half expire at 10, half at 1000; keys without a TTL do not count.
    ks.SetString(0, "k" + std::to_string(i), "v", i % 2 == 0 ? 10 : 1000);
    ks.SetString(0, "p" + std::to_string(i), "v", Entry::kNoExpire);
  }
  EXPECT_EQ(ks.expired_stale_ratio(), 0.0);
  // One cycle over the whole table at time 20: 50 of the 100 keys with a TTL had expired.
  EXPECT_EQ(ks.ActiveExpireCycle(20, 1u << 20), 50u);
  EXPECT_NEAR(ks.expired_stale_ratio(), 0.5 * 0.05, 1e-9);
  // Nothing stale: the estimate moves 5% of the way to 0.
  ks.ActiveExpireCycle(20, 1u << 20);
  EXPECT_NEAR(ks.expired_stale_ratio(), 0.5 * 0.05 * 0.95, 1e-9);
  // No key with a TTL visited: the estimate stays.
  for (int i = 1; i < 100; i += 2) ks.SetExpire(0, "k" + std::to_string(i), Entry::kNoExpire);
  ks.ActiveExpireCycle(20, 1u << 20);
  EXPECT_NEAR(ks.expired_stale_ratio(), 0.5 * 0.05 * 0.95, 1e-9);
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

TEST(KeyspaceTest, StringForWriteChangesInPlaceAndGrowsWithRoom) {
  Keyspace ks(1);
  // A new key: zeros, raw, no expiry.
  Entry* e = ks.StringForWrite(0, "b", nullptr, 5);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->ValueString(), std::string(5, '\0'));
  e->MutableValue()[1] = 'x';
  EXPECT_EQ(ks.Find(0, "b", 0)->ValueString(), std::string("\0x\0\0\0", 5));
  // Long enough already: the same entry, and still a change (a master propagates writes
  // that move the change counter).
  uint64_t changes = ks.changes();
  EXPECT_EQ(ks.StringForWrite(0, "b", ks.Find(0, "b", 0), 3), ks.Find(0, "b", 0));
  EXPECT_EQ(ks.changes(), changes + 1);
  // A packed value (ASCII, 16 bytes or more) comes back raw, its bytes kept, with its TTL.
  ks.SetString(0, "p", "abcdefghijklmnopqrstuvwxyz", 99000);
  Entry* p = ks.Find(0, "p", 0);
  ASSERT_TRUE(p->IsPacked());
  p = ks.StringForWrite(0, "p", p, 30);
  EXPECT_TRUE(p->IsRaw());
  EXPECT_EQ(p->ValueString(), std::string("abcdefghijklmnopqrstuvwxyz\0\0\0\0", 30));
  EXPECT_EQ(p->ExpireMs(), 99000);
  EXPECT_EQ(ks.ExpiresCount(0), 1u);
  // Growing a big value a byte at a time: it moves O(log n) times, not once per byte,
  // and the bytes charged follow the allocation.
  Entry* g = ks.StringForWrite(0, "g", nullptr, 4096);
  size_t moves = 0;
  for (size_t len = 4097; len <= 200000; len++) {
    Entry* before = ks.Find(0, "g", 0);
    g = ks.StringForWrite(0, "g", before, len);
    g->MutableValue()[len - 1] = static_cast<char>(len);
    if (g != before) moves++;
  }
  EXPECT_LE(moves, 12u);
  EXPECT_EQ(g->ValueLen(), 200000u);
  EXPECT_EQ(g->ValueString()[4096], static_cast<char>(4097));
  EXPECT_EQ(g->ValueString()[199999], static_cast<char>(200000));
  EXPECT_GE(ks.entry_bytes(), 200000u);
  EXPECT_TRUE(ks.Delete(0, "g"));
  EXPECT_TRUE(ks.Delete(0, "b"));
  EXPECT_TRUE(ks.Delete(0, "p"));
  EXPECT_EQ(ks.entry_bytes(), 0u);
}

// SET over a string whose new value has the same length, is stored the same way (packed
// or raw) and keeps the expiry's presence reuses the entry's bytes; anything else makes a
// new entry. Either way the value, the TTL, the counts and the bytes charged are as if
// the key had been written anew.
TEST(KeyspaceTest, AnOverwriteOfTheSameShapeReusesTheEntry) {
  Keyspace ks(1);
  std::string a(100, 'a'), b(100, 'b');
  ks.SetString(0, "k", a, Entry::kNoExpire);
  Entry* e = ks.FindNoTouch(0, "k", 0);
  ASSERT_TRUE(e->IsPacked());
  size_t bytes = ks.entry_bytes();
  uint64_t changes = ks.changes();
  EXPECT_EQ(ks.SetString(0, "k", b, Entry::kNoExpire), e);  // packed over packed
  EXPECT_EQ(ks.FindNoTouch(0, "k", 0)->ValueString(), b);
  EXPECT_EQ(ks.entry_bytes(), bytes);
  EXPECT_EQ(ks.changes(), changes + 1);
  // The same length but binary: stored raw, so a new entry.
  std::string bin = b;
  bin[50] = static_cast<char>(0xff);
  Entry* r = ks.SetString(0, "k", bin, Entry::kNoExpire);
  EXPECT_NE(r, e);
  EXPECT_TRUE(r->IsRaw());
  EXPECT_EQ(ks.FindNoTouch(0, "k", 0)->ValueString(), bin);
  std::string bin2 = bin;
  bin2[0] = static_cast<char>(0x80);
  EXPECT_EQ(ks.SetString(0, "k", bin2, Entry::kNoExpire), r);  // raw over raw
  EXPECT_EQ(ks.FindNoTouch(0, "k", 0)->ValueString(), bin2);
  // Printable again: packed, a new entry.
  EXPECT_TRUE(ks.SetString(0, "k", a, Entry::kNoExpire)->IsPacked());
  // Another length: a new entry.
  Entry* before = ks.FindNoTouch(0, "k", 0);
  EXPECT_NE(ks.SetString(0, "k", std::string(101, 'c'), Entry::kNoExpire), before);
  EXPECT_EQ(ks.FindNoTouch(0, "k", 0)->ValueString(), std::string(101, 'c'));
  // A TTL where there was none: a new entry, counted among the expires; then the same
  // shape with another TTL: in place, the new TTL; then none again: a new entry.
  before = ks.FindNoTouch(0, "k", 0);
  Entry* t = ks.SetString(0, "k", std::string(101, 'd'), 5000);
  EXPECT_NE(t, before);
  EXPECT_EQ(ks.ExpiresCount(0), 1u);
  EXPECT_EQ(ks.SetString(0, "k", std::string(101, 'e'), 9000), t);
  EXPECT_EQ(ks.FindNoTouch(0, "k", 0)->ExpireMs(), 9000);
  EXPECT_EQ(ks.FindNoTouch(0, "k", 0)->ValueString(), std::string(101, 'e'));
  EXPECT_EQ(ks.ExpiresCount(0), 1u);
  EXPECT_NE(ks.SetString(0, "k", std::string(101, 'f'), Entry::kNoExpire), t);
  EXPECT_FALSE(ks.FindNoTouch(0, "k", 0)->HasExpire());
  EXPECT_EQ(ks.ExpiresCount(0), 0u);
  // An expired key of the same shape is written over: live again, with the new TTL.
  ks.SetString(0, "x", "old-value", 10);
  Entry* x = ks.FindNoTouch(0, "x", 0);
  EXPECT_EQ(ks.SetString(0, "x", "new-value", 50000), x);
  EXPECT_EQ(ks.FindRead(0, "x", 20)->ValueString(), "new-value");
  // A raw value set again from a view of its own bytes: in place, unchanged.
  Entry* own = ks.FindNoTouch(0, "x", 0);
  std::string scratch;
  std::string_view view = own->Value(&scratch);
  ASSERT_TRUE(scratch.empty());  // viewed in place
  EXPECT_EQ(ks.SetString(0, "x", view, 50000), own);
  EXPECT_EQ(ks.FindNoTouch(0, "x", 0)->ValueString(), "new-value");
  // A raw entry with room to grow (StringForWrite moved it to a bigger slot): a new
  // entry, charged as any new one of its size.
  Entry* grown = ks.StringForWrite(0, "room", ks.StringForWrite(0, "room", nullptr, 5), 40);
  ASSERT_GT(Entry::UsableSize(grown), SlabHeap::SlotSize(grown->AllocSize()));
  std::string raw40(40, 'r');
  raw40[0] = static_cast<char>(0x90);
  Entry* fresh = ks.SetString(0, "room", raw40, Entry::kNoExpire);
  EXPECT_NE(fresh, grown);
  EXPECT_EQ(Entry::UsableSize(fresh), SlabHeap::SlotSize(fresh->AllocSize()));
  EXPECT_EQ(ks.SetString(0, "room", raw40, Entry::kNoExpire), fresh);  // and then in place
  EXPECT_TRUE(ks.Delete(0, "room"));
  // A value too big for the slab (from mimalloc): always a new entry.
  ks.SetString(0, "big", std::string(5000, 'g'), Entry::kNoExpire);
  Entry* big = ks.FindNoTouch(0, "big", 0);
  EXPECT_NE(ks.SetString(0, "big", std::string(5000, 'h'), Entry::kNoExpire), big);
  EXPECT_EQ(ks.FindNoTouch(0, "big", 0)->ValueString(), std::string(5000, 'h'));
  EXPECT_TRUE(ks.Delete(0, "k"));
  EXPECT_TRUE(ks.Delete(0, "x"));
  EXPECT_TRUE(ks.Delete(0, "big"));
  EXPECT_EQ(ks.entry_bytes(), 0u);
  EXPECT_EQ(ks.DbSize(0), 0u);
}

TEST(KeyspaceTest, ValueRangeDecodesOnlyWhatItReads) {
  Keyspace ks(1);
  std::string v;
  for (int i = 0; i < 1000; i++) v.push_back(static_cast<char>('a' + i % 26));
  ks.SetString(0, "k", v, Entry::kNoExpire);
  Entry* e = ks.Find(0, "k", 0);
  ASSERT_TRUE(e->IsPacked());
  std::string scratch;
  for (size_t from : {0, 1, 15, 16, 17, 500, 990, 999}) {
    for (size_t to : {from, from + 1, from + 9, from + 16, from + 33, size_t{1000}}) {
      if (to > 1000 || to < from) continue;
      ASSERT_EQ(e->ValueRange(from, to, &scratch), std::string_view(v).substr(from, to - from))
          << from << " " << to;
    }
  }
  EXPECT_LE(scratch.size(), 64u);  // the last read decoded a few groups, not the value
}

}  // namespace
}  // namespace strata
