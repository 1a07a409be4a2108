#include "storage/dirty_ranges.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace strata {
namespace {

TEST(RangeSetTest, IdsMapHashesAndDatabases) {
  uint64_t h = 0xABCDEF0123456789ull;
  for (uint32_t bits : {RangeSet::kRangeBits, RangeSet::kMaxRangeBits}) {
    RangeSet r(bits);
    uint32_t id = r.Id(3, h);
    EXPECT_EQ(r.DbOf(id), 3u);
    EXPECT_LE(r.FirstHash(id), h);
    EXPECT_GE(r.LastHash(id), h);
    EXPECT_EQ(r.LastHash(id) - r.FirstHash(id), ~0ull >> bits);
  }
}

TEST(RangeSetTest, WidthFollowsTheDatabases) {
  EXPECT_EQ(RangeSet::BitsFor(1), RangeSet::kMaxRangeBits);
  EXPECT_EQ(RangeSet::BitsFor(16), RangeSet::kMaxRangeBits);
  EXPECT_EQ(RangeSet::BitsFor(256), 24u);
  EXPECT_EQ(RangeSet::BitsFor(257), 23u);
  EXPECT_EQ(RangeSet::BitsFor(1024), 22u);
  EXPECT_EQ(RangeSet::BitsFor(1u << 20), 12u);
  EXPECT_EQ(RangeSet::BitsFor(UINT32_MAX), RangeSet::kMinRangeBits);
  // The largest database's last range fits in 32 bits.
  uint32_t dbs = 1000;
  RangeSet r(RangeSet::BitsFor(dbs));
  EXPECT_EQ(r.DbOf(r.Id(dbs - 1, ~0ull)), dbs - 1);
}

TEST(RangeSetTest, RunsAndMergesAcrossWidths) {
  RangeSet fine(24);
  fine.AddDb(2);
  uint32_t first = fine.Id(2, 0);
  EXPECT_TRUE(fine.AllIn(first, fine.Id(2, ~0ull)));
  EXPECT_EQ(fine.RunEnd(first), fine.Id(2, ~0ull));  // the run stops at the database's end
  RangeSet some(24);
  uint64_t h = 0x1234567890ABCDEFull;
  uint32_t a = some.Id(0, h);
  for (uint32_t i = 0; i < 37; i++) some.Add(a + i);
  some.Add(a + 40);
  EXPECT_EQ(some.RunEnd(a), a + 36);
  EXPECT_EQ(some.RunEnd(a + 40), a + 40);
  EXPECT_FALSE(some.AllIn(a, a + 37));
  // A coarse set merged into a fine one covers every fine range of each coarse one.
  RangeSet coarse(22);
  coarse.Add(coarse.Id(1, h));
  RangeSet into(24);
  into.Merge(coarse);
  EXPECT_EQ(into.Cardinality(), 4u);
  EXPECT_TRUE(into.Contains(1, coarse.FirstHash(coarse.Id(1, h))));
  EXPECT_TRUE(into.Contains(1, coarse.LastHash(coarse.Id(1, h))));
  // A fine set merged into a coarse one marks the coarse range holding it.
  RangeSet back(22);
  back.Merge(some);
  EXPECT_TRUE(back.Contains(0, h));
  // Database 0: a coarse id is the fine id without its two lowest bits; the fine ids
  // a..a+36 and a+40 touch every coarse id from a's to a+40's.
  EXPECT_EQ(back.Cardinality(), ((a + 40) >> 2) - (a >> 2) + 1);
}

TEST(RangeSetTest, EachWidthDecodesAndOthersAreRefused) {
  for (uint32_t bits : {RangeSet::kRangeBits, RangeSet::kMaxRangeBits}) {
    RangeSet r(bits);
    r.Add(r.Id(5, 0xFEDCBA9876543210ull));
    std::string enc;
    r.Encode(&enc);
    RangeSet back;
    std::string error;
    ASSERT_TRUE(RangeSet::Decode(enc, &back, &error)) << error;
    EXPECT_EQ(back.bits(), bits);
    EXPECT_TRUE(back.Contains(5, 0xFEDCBA9876543210ull));
  }
  std::string bad;
  bad.push_back(static_cast<char>(RangeSet::kMaxRangeBits + 1));
  RangeSet empty;
  empty.Encode(&bad);  // a valid bitmap after the bad width
  bad.erase(1, 1);
  RangeSet out;
  std::string error;
  EXPECT_FALSE(RangeSet::Decode(bad, &out, &error));
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
    model.insert(t.live().Id(db, h));
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
  for (uint32_t m : model) EXPECT_TRUE(back.Contains(back.DbOf(m), back.FirstHash(m)));
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
