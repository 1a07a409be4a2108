#include "server/engine/key_lock_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace strata {
namespace {

struct Value {
  uint32_t a = 0;
  uint64_t b = 0;
};

// Checks every entry of the reference against the map, and the map's count.
void ExpectSame(KeyLockMap<Value>& m, const std::unordered_map<uint64_t, Value>& ref) {
  ASSERT_EQ(m.size(), ref.size());
  for (const auto& [k, v] : ref) {
    Value* got = m.find(k);
    ASSERT_NE(got, nullptr) << k;
    EXPECT_EQ(got->a, v.a);
    EXPECT_EQ(got->b, v.b);
  }
  size_t n = 0;
  m.ForEach([&](uint64_t k, const Value& v) {
    n++;
    auto it = ref.find(k);
    ASSERT_NE(it, ref.end()) << k;
    EXPECT_EQ(v.a, it->second.a);
  });
  EXPECT_EQ(n, ref.size());
}

TEST(KeyLockMapTest, InsertFindErase) {
  KeyLockMap<Value> m;
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.find(7), nullptr);
  m[7].a = 3;
  m[0].a = 4;  // key 0 is a key like any other
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m[7].a, 3u);  // found, not inserted again
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.find(0)->a, 4u);
  m.erase(7);
  m.erase(7);    // absent: nothing
  m.erase(123);  // never there
  EXPECT_EQ(m.find(7), nullptr);
  EXPECT_EQ(m.size(), 1u);
  EXPECT_TRUE(m.Any([](uint64_t k, const Value& v) { return k == 0 && v.a == 4; }));
  m.erase(0);
  EXPECT_TRUE(m.empty());
  // A key inserted again starts from a value-initialized value.
  EXPECT_EQ(m[7].a, 0u);
}

// Random inserts, updates and erases against std::unordered_map, over key sets small
// enough that probe runs collide and wrap around the table's end, and big enough to grow
// and then shrink the table.
TEST(KeyLockMapTest, MatchesAReferenceUnderRandomOperations) {
  std::mt19937_64 rng(42);
  for (uint64_t universe : {8ull, 40ull, 5000ull}) {
    KeyLockMap<Value> m;
    std::unordered_map<uint64_t, Value> ref;
    for (int step = 0; step < 60000; step++) {
      uint64_t k = rng() % universe * 0x10001ull;  // spread, with shared low bits
      switch (rng() % 3) {
        case 0:
        case 1: {
          Value& v = m[k];
          v.a++;
          v.b = k ^ v.a;
          Value& r = ref[k];
          r.a++;
          r.b = k ^ r.a;
          break;
        }
        default:
          m.erase(k);
          ref.erase(k);
      }
      if (step % 5000 == 0) ExpectSame(m, ref);
    }
    ExpectSame(m, ref);
    // Emptied, the table shrinks back to the size it keeps.
    for (const auto& [k, v] : ref) m.erase(k);
    EXPECT_TRUE(m.empty());
    EXPECT_LE(m.capacity(), KeyLockMap<Value>::kShrinkAboveSlots);
  }
}

TEST(KeyLockMapTest, GrowsPastHalfAndShrinksBelowAnEighthOnceBig) {
  KeyLockMap<Value> m;
  EXPECT_EQ(m.capacity(), KeyLockMap<Value>::kMinSlots);
  for (uint64_t k = 1; k <= 20000; k++) m[k].a = static_cast<uint32_t>(k);
  EXPECT_GE(m.capacity(), 40000u);
  EXPECT_LT(m.capacity(), 80000u);
  for (uint64_t k = 1; k <= 19990; k++) m.erase(k);
  EXPECT_EQ(m.capacity(), KeyLockMap<Value>::kShrinkAboveSlots);
  for (uint64_t k = 19991; k <= 20000; k++) EXPECT_EQ(m.find(k)->a, k);
  // A small table keeps its size however it is emptied.
  KeyLockMap<Value> small;
  for (uint64_t k = 1; k <= 300; k++) small[k].a = 1;
  size_t grown = small.capacity();
  EXPECT_GT(grown, KeyLockMap<Value>::kMinSlots);
  for (uint64_t k = 1; k <= 300; k++) small.erase(k);
  EXPECT_EQ(small.capacity(), grown);
}

}  // namespace
}  // namespace strata
