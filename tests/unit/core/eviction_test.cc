#include "core/eviction.h"

#include <gtest/gtest.h>

#include <string>

#include "core/keyspace.h"

namespace strata {
namespace {

using access::Clock;
using access::Mode;

std::string Key(const char* prefix, int i) { return std::string(prefix) + std::to_string(i); }

TEST(EvictionTest, PolicyNamesRoundTrip) {
  for (const char* name : {"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
                           "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}) {
    EvictionPolicy p;
    ASSERT_TRUE(ParseEvictionPolicy(name, &p)) << name;
    EXPECT_STREQ(EvictionPolicyName(p), name);
  }
  EvictionPolicy p;
  EXPECT_TRUE(ParseEvictionPolicy("ALLKEYS-LRU", &p));
  EXPECT_FALSE(ParseEvictionPolicy("lru", &p));
  EXPECT_EQ(AccessModeFor(EvictionPolicy::kVolatileLfu), Mode::kLfu);
  EXPECT_EQ(AccessModeFor(EvictionPolicy::kVolatileTtl), Mode::kLru);
}

TEST(EvictionTest, NothingToEvict) {
  Keyspace ks(4);
  Evictor ev;
  size_t freed = 1;
  EXPECT_EQ(ev.EvictOne(ks, EvictionPolicy::kAllKeysLru, 5, 0, &freed), Evictor::Result::kNone);
  EXPECT_EQ(freed, 0u);
  ks.SetString(2, "persistent", "v", Entry::kNoExpire);
  for (auto p : {EvictionPolicy::kVolatileLru, EvictionPolicy::kVolatileLfu,
                 EvictionPolicy::kVolatileRandom, EvictionPolicy::kVolatileTtl}) {
    EXPECT_EQ(ev.EvictOne(ks, p, 5, 0, &freed), Evictor::Result::kNone);
  }
  EXPECT_EQ(ev.EvictOne(ks, EvictionPolicy::kNoEviction, 5, 0, &freed),
            Evictor::Result::kNoEviction);
  EXPECT_EQ(ks.DbSize(2), 1u);
  // One key in a sparse database is still found.
  EXPECT_EQ(ev.EvictOne(ks, EvictionPolicy::kAllKeysLru, 5, 0, &freed), Evictor::Result::kEvicted);
  EXPECT_GT(freed, 0u);
  EXPECT_EQ(ks.DbSize(2), 0u);
  EXPECT_EQ(ks.stats().evicted_keys, 1u);
}

TEST(EvictionTest, VolatilePoliciesTakeOnlyKeysWithExpiry) {
  for (auto p : {EvictionPolicy::kVolatileLru, EvictionPolicy::kVolatileLfu,
                 EvictionPolicy::kVolatileRandom, EvictionPolicy::kVolatileTtl}) {
    Keyspace ks(1);
    for (int i = 0; i < 5000; i++) ks.SetString(0, Key("p", i), "v", Entry::kNoExpire);
    for (int i = 0; i < 20; i++) ks.SetString(0, Key("t", i), "v", 1'000'000 + i);
    Evictor ev;
    size_t freed = 0;
    int evicted = 0;
    for (int round = 0; round < 1000 && ks.ExpiresCount(0) > 0; round++) {
      Evictor::Result r = ev.EvictOne(ks, p, 5, 0, &freed);
      ASSERT_NE(r, Evictor::Result::kNone);
      if (r == Evictor::Result::kEvicted) evicted++;
    }
    EXPECT_EQ(evicted, 20) << EvictionPolicyName(p);
    EXPECT_EQ(ks.DbSize(0), 5000u);
    EXPECT_EQ(ev.EvictOne(ks, p, 5, 0, &freed), Evictor::Result::kNone);
  }
}

TEST(EvictionTest, LruTakesTheLongestIdleFirst) {
  Keyspace ks(1);
  ks.SetAccessClock(Clock::At(1'000'000, Mode::kLru, 10, 1));
  for (int i = 0; i < 2000; i++) ks.SetString(0, Key("old", i), "v", Entry::kNoExpire);
  ks.SetAccessClock(Clock::At(2'000'000, Mode::kLru, 10, 1));
  for (int i = 0; i < 2000; i++) ks.SetString(0, Key("new", i), "v", Entry::kNoExpire);
  // Half of the old ones are read now.
  for (int i = 0; i < 1000; i++) ks.FindRead(0, Key("old", i), 2'000'000);
  Evictor ev;
  size_t freed = 0;
  for (int i = 0; i < 500; i++) {
    ASSERT_EQ(ev.EvictOne(ks, EvictionPolicy::kAllKeysLru, 5, 2'000'000, &freed),
              Evictor::Result::kEvicted);
  }
  // The keys evicted were the unread old ones (the only keys idle for 1000 s), but for
  // the few a sample of recent keys alone may give (approximated LRU, as Redis).
  int read_left = 0, new_left = 0, unread_left = 0;
  for (int i = 0; i < 1000; i++) read_left += ks.FindNoTouch(0, Key("old", i), 0) != nullptr;
  for (int i = 1000; i < 2000; i++) unread_left += ks.FindNoTouch(0, Key("old", i), 0) != nullptr;
  for (int i = 0; i < 2000; i++) new_left += ks.FindNoTouch(0, Key("new", i), 0) != nullptr;
  // Evicting at random would leave ~875 of the 1000 unread old keys and take ~375 of
  // the 3000 others.
  EXPECT_GE(read_left, 950);
  EXPECT_GE(new_left, 1900);
  EXPECT_LE(unread_left, 620);
}

TEST(EvictionTest, LfuTakesTheLeastFrequentFirst) {
  Keyspace ks(1);
  ks.SetAccessClock(Clock::At(0, Mode::kLfu, 10, 1));
  for (int i = 0; i < 3000; i++) ks.SetString(0, Key("k", i), "v", Entry::kNoExpire);
  for (int n = 0; n < 30; n++) {
    for (int i = 0; i < 300; i++) ks.FindRead(0, Key("k", i), 0);
  }
  Evictor ev;
  size_t freed = 0;
  for (int i = 0; i < 2000; i++) {
    ASSERT_EQ(ev.EvictOne(ks, EvictionPolicy::kAllKeysLfu, 5, 0, &freed),
              Evictor::Result::kEvicted);
  }
  for (int i = 0; i < 300; i++) EXPECT_NE(ks.FindNoTouch(0, Key("k", i), 0), nullptr) << i;
}

TEST(EvictionTest, VolatileTtlTakesTheNearestExpiryFirst) {
  Keyspace ks(2);
  for (int i = 0; i < 1000; i++) {
    ks.SetString(i % 2, Key("soon", i), "v", 1'000'000 + i);
    ks.SetString(i % 2, Key("late", i), "v", 9'000'000 + i);
  }
  Evictor ev;
  size_t freed = 0;
  for (int i = 0; i < 700; i++) {
    ASSERT_EQ(ev.EvictOne(ks, EvictionPolicy::kVolatileTtl, 10, 0, &freed),
              Evictor::Result::kEvicted);
  }
  int late = 0;
  for (int i = 0; i < 1000; i++) late += ks.FindNoTouch(i % 2, Key("late", i), 0) != nullptr;
  EXPECT_GE(late, 990);
}

TEST(EvictionTest, RandomPoliciesEvictUntilEmpty) {
  Keyspace ks(16);
  for (int i = 0; i < 500; i++) ks.SetString(i % 16, Key("k", i), "v", i % 2 ? 5'000'000 : 0);
  Evictor ev;
  size_t freed = 0;
  int n = 0;
  while (ev.EvictOne(ks, EvictionPolicy::kVolatileRandom, 5, 0, &freed) != Evictor::Result::kNone) {
    ASSERT_LT(++n, 100000);
  }
  EXPECT_EQ(ks.expires_count(), 0u);
  EXPECT_EQ(ks.key_count(), 250u);
  while (ev.EvictOne(ks, EvictionPolicy::kAllKeysRandom, 5, 0, &freed) != Evictor::Result::kNone) {
    ASSERT_LT(++n, 100000);
  }
  EXPECT_EQ(ks.key_count(), 0u);
}

TEST(EvictionTest, ARareKeyWithTtlIsFoundWithinBoundedCalls) {
  Keyspace ks(1);
  for (int i = 0; i < 200000; i++) ks.SetString(0, Key("p", i), "v", Entry::kNoExpire);
  ks.SetString(0, "the-one", "v", 5'000'000);
  Evictor ev;
  size_t freed = 0;
  int calls = 0;
  Evictor::Result r;
  // Each call walks a bounded part of the table; the cursor goes on from there.
  while ((r = ev.EvictOne(ks, EvictionPolicy::kVolatileLru, 5, 0, &freed)) ==
         Evictor::Result::kNotFound) {
    ASSERT_LT(++calls, 1000);
  }
  EXPECT_EQ(r, Evictor::Result::kEvicted);
  EXPECT_EQ(ks.FindNoTouch(0, "the-one", 0), nullptr);
  EXPECT_EQ(ks.DbSize(0), 200000u);
}

}  // namespace
}  // namespace strata
