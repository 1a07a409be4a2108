#include "storage/dirty_ranges.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace strata {
namespace {

TEST(RangeSetTest, IdsMapHashesAndDatabases) {
  uint64_t h = 0xABCDEF0123456789ull;
  uint32_t id = RangeSet::Id(3, h);
  EXPECT_EQ(RangeSet::DbOf(id), 3u);
  EXPECT_LE(RangeSet::FirstHash(id), h);
  EXPECT_GE(RangeSet::LastHash(id), h);
  EXPECT_EQ(RangeSet::LastHash(id) - RangeSet::FirstHash(id), ~0ull >> RangeSet::kRangeBits);
}

TEST(RangeSetTest, TrackerTakeGiveBackAndEncoding) {
  DirtyRanges t;
  std::mt19937_64 rng(5);
  std::set<uint32_t> model;
  for (int i = 0; i < 10000; i++) {
    uint32_t db = rng() % 4;
    uint64_t h = rng();
    t.KeyChanged(db, h);
    t.KeyChanged(db, h);  // repeated changes of one key are one range
    model.insert(RangeSet::Id(db, h));
  }
  RangeSet taken = t.Take();
  EXPECT_EQ(taken.Cardinality(), model.size());
  EXPECT_TRUE(t.live().empty());
  uint32_t from = 0, id = 0;
  auto it = model.begin();
  while (taken.NextAtLeast(from, &id)) {
    ASSERT_NE(it, model.end());
    EXPECT_EQ(id, *it++);
    from = id + 1;
  }
  EXPECT_EQ(it, model.end());
  std::string enc;
  taken.Encode(&enc);
  RangeSet back;
  std::string error;
  ASSERT_TRUE(RangeSet::Decode(enc, &back, &error)) << error;
  EXPECT_EQ(back.Cardinality(), model.size());
  for (uint32_t m : model) EXPECT_TRUE(back.Contains(RangeSet::DbOf(m), RangeSet::FirstHash(m)));
  // Damaged or truncated encodings are refused, never crash.
  for (size_t cut = 0; cut < enc.size(); cut += enc.size() / 50 + 1) {
    RangeSet r;
    EXPECT_FALSE(RangeSet::Decode(std::string_view(enc).substr(0, cut), &r, &error)) << cut;
  }
  t.GiveBack(taken);
  EXPECT_EQ(t.live().Cardinality(), model.size());
  t.DbChanged(7);
  EXPECT_TRUE(t.live().Contains(7, 0));
  EXPECT_TRUE(t.live().Contains(7, ~0ull));
  EXPECT_FALSE(t.live().Contains(8, 0));
}

}  // namespace
}  // namespace strata
