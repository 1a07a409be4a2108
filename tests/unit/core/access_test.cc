#include "core/access.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/entry.h"
#include "core/keyspace.h"
#include "core/slab.h"

namespace strata {
namespace {

using access::Clock;
using access::Mode;

TEST(AccessTest, LruIdleTimeWrapsLikeRedis) {
  EXPECT_EQ(access::LruClock(5'000), 5u);
  EXPECT_EQ(access::LruIdleMs(10, 7), 3000u);
  EXPECT_EQ(access::LruIdleMs(7, 7), 0u);
  // The clock wrapped once since the access.
  EXPECT_EQ(access::LruIdleMs(2, access::kClockMax - 1), 3000u);
  EXPECT_EQ(access::LruClock(int64_t{access::kClockMax + 1} * 1000 + 999), 0u);
}

TEST(AccessTest, LfuStartsAtInitAndDecaysPerPeriod) {
  Clock c = Clock::At(60'000 * 100, Mode::kLfu, 10, 1);
  uint32_t s = c.Initial();
  EXPECT_EQ(access::LfuCounter(s), access::kLfuInitVal);
  EXPECT_EQ(access::LfuDecayed(s, 100, 1), 5);
  EXPECT_EQ(access::LfuDecayed(s, 103, 1), 2);  // three minutes, one per minute
  EXPECT_EQ(access::LfuDecayed(s, 110, 1), 0);  // never below zero
  EXPECT_EQ(access::LfuDecayed(s, 103, 2), 4);  // one period of two minutes
  EXPECT_EQ(access::LfuDecayed(s, 500, 0), 5);  // decay off
  // The minute counter wrapped once.
  uint32_t late = access::LfuState(65534, 9);
  EXPECT_EQ(access::LfuDecayed(late, 2, 1), 6);
}

TEST(AccessTest, LfuIncrementIsLogarithmic) {
  EXPECT_EQ(access::LfuIncrement(5, 10, 0.999), 6);  // at the start value: always
  EXPECT_EQ(access::LfuIncrement(6, 10, 0.5), 6);    // p = 1/11
  EXPECT_EQ(access::LfuIncrement(6, 10, 0.05), 7);
  EXPECT_EQ(access::LfuIncrement(255, 0, 0.0), 255);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  uint8_t c = access::kLfuInitVal;
  for (int i = 0; i < 1000; i++) c = access::LfuIncrement(c, 10, u(rng));
  // Redis's table for factor 10: 1K hits reach about 18.
  EXPECT_GE(c, 12);
  EXPECT_LE(c, 24);
  Clock clock = Clock::At(0, Mode::kLfu, 10, 1);
  EXPECT_EQ(access::LfuCounter(clock.Touched(clock.Initial(), 0.9)), 6);
  Clock lru = Clock::At(42'000, Mode::kLru, 10, 1);
  EXPECT_EQ(lru.Touched(7, 0.5), 42u);
}

TEST(AccessTest, OnlyEntriesCreatedWithItCarryTheField) {
  SlabHeap heap;
  size_t a = 0, b = 0;
  Entry* plain = Entry::Create(heap, "key", "value", ValueType::kString, 0, &a);
  Entry* with = Entry::Create(heap, "key", "value", ValueType::kString, 1234, &b, 0xABCDEF);
  EXPECT_FALSE(plain->HasAccess());
  ASSERT_TRUE(with->HasAccess());
  EXPECT_EQ(with->Access(), 0xABCDEFu);
  EXPECT_EQ(with->AllocSize(), plain->AllocSize() + 3 + 8);
  EXPECT_EQ(with->Key(), "key");
  EXPECT_EQ(with->ValueString(), "value");
  EXPECT_EQ(with->ExpireMs(), 1234);
  with->SetAccess(0x123456);
  EXPECT_EQ(with->Access(), 0x123456u);
  EXPECT_EQ(with->Key(), "key");
  EXPECT_EQ(with->ExpireMs(), 1234);
  Entry::Destroy(heap, plain);
  Entry::Destroy(heap, with);
}

TEST(AccessTest, KeyspaceRecordsAccessesButNotPeeks) {
  Keyspace ks(1);
  ks.SetAccessClock(Clock::At(10'000, Mode::kLru, 10, 1));
  ks.SetString(0, "k", "v", Entry::kNoExpire);
  ASSERT_TRUE(ks.FindNoTouch(0, "k", 10'000)->HasAccess());
  EXPECT_EQ(ks.FindNoTouch(0, "k", 10'000)->Access(), 10u);
  ks.SetAccessClock(Clock::At(50'000, Mode::kLru, 10, 1));
  EXPECT_EQ(ks.FindNoTouch(0, "k", 50'000)->Access(), 10u);
  EXPECT_EQ(ks.FindRead(0, "k", 50'000, /*touch=*/false)->Access(), 10u);
  EXPECT_EQ(ks.FindRead(0, "k", 50'000)->Access(), 50u);
  ks.SetAccessClock(Clock::At(70'000, Mode::kLru, 10, 1));
  EXPECT_EQ(ks.Find(0, "k", 70'000)->Access(), 70u);
  // A TTL change keeps the state.
  ks.SetAccessClock(Clock::At(90'000, Mode::kLru, 10, 1));
  EXPECT_EQ(ks.SetExpire(0, "k", 1'000'000)->Access(), 70u);
  // An overwrite is a new key's state, whether the entry is reused (the same shape) or
  // not (another length).
  ks.SetAccessClock(Clock::At(120'000, Mode::kLru, 10, 1));
  Entry* same = ks.SetString(0, "k", "w", 1'000'000);
  EXPECT_EQ(same, ks.FindNoTouch(0, "k", 120'000));
  EXPECT_EQ(same->Access(), 120u);
  ks.SetAccessClock(Clock::At(130'000, Mode::kLru, 10, 1));
  EXPECT_EQ(ks.SetString(0, "k", "longer", 1'000'000)->Access(), 130u);
}

TEST(AccessTest, LfuOverwriteKeepsTheCounterAndCountsOneAccess) {
  Keyspace ks(1);
  // lfu-log-factor 0: every access counts, so the counts below are exact.
  ks.SetAccessClock(Clock::At(0, Mode::kLfu, 0, 1));
  ks.SetString(0, "k", "v", Entry::kNoExpire);
  EXPECT_EQ(access::LfuCounter(ks.FindNoTouch(0, "k", 0)->Access()), 5);
  // An overwrite with no lookup before it counts as the access.
  ks.SetString(0, "k", "w", Entry::kNoExpire);
  EXPECT_EQ(access::LfuCounter(ks.FindNoTouch(0, "k", 0)->Access()), 6);
  // A read-modify-write (write lookup, then overwrite) counts once, not twice.
  for (int i = 0; i < 20; i++) {
    uint8_t before = access::LfuCounter(ks.FindNoTouch(0, "k", 0)->Access());
    ks.Find(0, "k", 0);
    ks.SetString(0, "k", "x", Entry::kNoExpire);
    EXPECT_EQ(access::LfuCounter(ks.FindNoTouch(0, "k", 0)->Access()), before + 1);
  }
  // A read, then an overwrite: two accesses (the read does not stand in for the write).
  ks.SetString(0, "r", "v", Entry::kNoExpire);
  ks.FindRead(0, "r", 0);
  ks.SetString(0, "r", "w", Entry::kNoExpire);
  EXPECT_EQ(access::LfuCounter(ks.FindNoTouch(0, "r", 0)->Access()), 7);
  // A new key starts over.
  ks.Delete(0, "k");
  ks.SetString(0, "k", "v", Entry::kNoExpire);
  EXPECT_EQ(access::LfuCounter(ks.FindNoTouch(0, "k", 0)->Access()), 5);
}

}  // namespace
}  // namespace strata
