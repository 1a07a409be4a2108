#include "storage/seq_set.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace strata {
namespace {

TEST(SeqSetTest, AddRemoveContainsAndSize) {
  SeqSet s;
  EXPECT_TRUE(s.empty());
  EXPECT_TRUE(s.Add(5));
  EXPECT_FALSE(s.Add(5));
  EXPECT_TRUE(s.Add(uint64_t{1} << 40));
  EXPECT_EQ(s.size(), 2u);
  EXPECT_TRUE(s.Contains(5));
  EXPECT_TRUE(s.Contains(uint64_t{1} << 40));
  EXPECT_FALSE(s.Contains(6));
  EXPECT_TRUE(s.Remove(5));
  EXPECT_FALSE(s.Remove(5));
  EXPECT_EQ(s.size(), 1u);
}

TEST(SeqSetTest, RangesCrossTheBoundaryOfA32BitChunk) {
  SeqSet s;
  const uint64_t edge = uint64_t{1} << 32;
  s.AddRange(edge - 10, edge + 9);
  EXPECT_EQ(s.size(), 20u);
  EXPECT_TRUE(s.Contains(edge - 1));  // the last number of a chunk
  EXPECT_TRUE(s.Contains(edge));
  EXPECT_FALSE(s.Contains(edge + 10));
  EXPECT_EQ(s.RangeCount(edge - 1, edge), 2u);
  EXPECT_EQ(s.RangeCount(0, UINT64_MAX), 20u);
  s.RemoveRange(edge - 5, edge + 4);
  EXPECT_EQ(s.size(), 10u);
  EXPECT_FALSE(s.Contains(edge - 1));
  EXPECT_TRUE(s.Contains(edge - 6));
  EXPECT_TRUE(s.Contains(edge + 5));
  s.AddRange(3, 2);  // empty: nothing
  EXPECT_EQ(s.size(), 10u);
}

TEST(SeqSetTest, MatchesAStdSetUnderRandomOperations) {
  std::mt19937_64 rng(7);
  SeqSet s;
  std::set<uint64_t> ref;
  auto pick = [&] {
    uint64_t base = (rng() % 3) << 32;  // three chunks
    return base + rng() % 5000;
  };
  for (int i = 0; i < 20000; i++) {
    uint64_t a = pick();
    switch (rng() % 5) {
      case 0:
      case 1:
        EXPECT_EQ(s.Add(a), ref.insert(a).second);
        break;
      case 2:
        EXPECT_EQ(s.Remove(a), ref.erase(a) == 1);
        break;
      case 3: {
        uint64_t b = a + rng() % 50;
        s.RemoveRange(a, b);
        ref.erase(ref.lower_bound(a), ref.upper_bound(b));
        break;
      }
      default: {
        uint64_t b = a + rng() % 1000;
        uint64_t n = 0;
        for (auto it = ref.lower_bound(a); it != ref.end() && *it <= b; ++it) n++;
        EXPECT_EQ(s.RangeCount(a, b), n);
      }
    }
  }
  EXPECT_EQ(s.size(), ref.size());
  SeqSet copy;
  copy.AddAll(s);
  EXPECT_EQ(copy.size(), ref.size());
  for (uint64_t v : ref) EXPECT_TRUE(copy.Contains(v));
  EXPECT_GT(s.MemoryBytes(), 0u);
}

TEST(SeqSetTest, DenseRunsCostFewBytes) {
  SeqSet s;
  s.AddRange(1, 1000000);
  EXPECT_EQ(s.size(), 1000000u);
  EXPECT_LT(s.MemoryBytes(), 1024u);
}

}  // namespace
}  // namespace strata
