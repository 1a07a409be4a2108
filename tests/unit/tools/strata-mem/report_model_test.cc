#include "tools/strata-mem/report_model.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::mem {
namespace {

GroupingOptions Grouping(int depth, bool collapse = true, std::string seps = ":") {
  GroupingOptions g;
  g.depth = depth;
  g.collapse_numbers = collapse;
  g.separators = std::move(seps);
  return g;
}

TEST(KeyPrefixTest, Depth) {
  EXPECT_EQ(KeyPrefix("user:1234:name", Grouping(1, false)), "user:*");
  EXPECT_EQ(KeyPrefix("user:1234:name", Grouping(2, false)), "user:1234:*");
  EXPECT_EQ(KeyPrefix("user:1234:name", Grouping(3, false)), "user:1234:*");
  // Fewer separators than the depth: every part before the last separator.
  EXPECT_EQ(KeyPrefix("user:1234", Grouping(2, false)), "user:*");
}

TEST(KeyPrefixTest, NoSeparator) {
  EXPECT_EQ(KeyPrefix("plainkey", Grouping(2)), kNoPrefixGroup);
  EXPECT_EQ(KeyPrefix("", Grouping(2)), kNoPrefixGroup);
  EXPECT_EQ(KeyPrefix("12345", Grouping(2)), kNoPrefixGroup);
}

TEST(KeyPrefixTest, CollapseNumbers) {
  EXPECT_EQ(KeyPrefix("user:1234:name", Grouping(2)), "user:#:*");
  EXPECT_EQ(KeyPrefix("user:99:name", Grouping(2)), "user:#:*");
  EXPECT_EQ(KeyPrefix("1:2:3", Grouping(2)), "#:#:*");
  // Only all-digit parts collapse.
  EXPECT_EQ(KeyPrefix("user:12a:name", Grouping(2)), "user:12a:*");
  EXPECT_EQ(KeyPrefix("user:-1:name", Grouping(2)), "user:-1:*");
}

TEST(KeyPrefixTest, SeveralSeparators) {
  GroupingOptions g = Grouping(2, true, ":/.");
  EXPECT_EQ(KeyPrefix("cache/eu.7:x", g), "cache/eu.*");
  EXPECT_EQ(KeyPrefix("a.1/b", g), "a.#/*");
  EXPECT_EQ(KeyPrefix("img/42", g), "img/*");
  // Empty parts are kept as they are.
  EXPECT_EQ(KeyPrefix(":x", Grouping(2)), ":*");
  EXPECT_EQ(KeyPrefix("a::b", Grouping(2)), "a::*");
}

TEST(KeyTypeTest, Parse) {
  EXPECT_EQ(ParseKeyType("string"), KeyType::kString);
  EXPECT_EQ(ParseKeyType("zset"), KeyType::kZset);
  EXPECT_EQ(ParseKeyType("stream"), KeyType::kStream);
  EXPECT_EQ(ParseKeyType("ReJSON-RL"), KeyType::kOther);
  EXPECT_FALSE(ParseKeyType("none").has_value());
  EXPECT_STREQ(KeyTypeName(KeyType::kOther), "other");
}

TEST(SizeHistogramTest, PowerOfTwoBuckets) {
  EXPECT_EQ(SizeHistogram::BucketOf(0), 0);
  EXPECT_EQ(SizeHistogram::BucketOf(1), 0);
  EXPECT_EQ(SizeHistogram::BucketOf(2), 1);
  EXPECT_EQ(SizeHistogram::BucketOf(3), 1);
  EXPECT_EQ(SizeHistogram::BucketOf(64), 6);
  EXPECT_EQ(SizeHistogram::BucketOf(127), 6);
  EXPECT_EQ(SizeHistogram::BucketOf(128), 7);
  EXPECT_EQ(SizeHistogram::BucketOf(UINT64_MAX), 63);
  EXPECT_EQ(SizeHistogram::BucketLow(6), 64u);
  EXPECT_EQ(SizeHistogram::BucketHigh(6), 127u);
  EXPECT_EQ(SizeHistogram::BucketLow(0), 0u);
  EXPECT_EQ(SizeHistogram::BucketHigh(0), 1u);
  EXPECT_EQ(SizeHistogram::BucketHigh(63), UINT64_MAX);
  for (int b = 1; b < 63; b++) {
    EXPECT_EQ(SizeHistogram::BucketOf(SizeHistogram::BucketLow(b)), b);
    EXPECT_EQ(SizeHistogram::BucketOf(SizeHistogram::BucketHigh(b)), b);
  }

  SizeHistogram h;
  EXPECT_EQ(h.Range(), std::make_pair(0, -1));
  h.Add(100);
  h.Add(120);
  h.Add(5000);
  EXPECT_EQ(h.Range(), std::make_pair(6, 12));
  EXPECT_EQ(h.bucket(6).keys, 2u);
  EXPECT_EQ(h.bucket(6).bytes, 220u);
  EXPECT_EQ(h.bucket(12).keys, 1u);
  EXPECT_EQ(h.bucket(7).keys, 0u);
}

TEST(TopKeysTest, KeepsTheBiggestInOrder) {
  TopKeys top(3);
  top.Add("a", KeyType::kString, 10);
  top.Add("b", KeyType::kHash, 50);
  top.Add("c", KeyType::kString, 30);
  top.Add("d", KeyType::kList, 5);
  top.Add("e", KeyType::kSet, 40);
  auto v = top.Sorted();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].key, "b");
  EXPECT_EQ(v[0].type, KeyType::kHash);
  EXPECT_EQ(v[1].key, "e");
  EXPECT_EQ(v[2].key, "c");
}

TEST(TopKeysTest, TiesByNameAndZero) {
  TopKeys top(2);
  for (const char* k : {"z", "m", "a", "q"}) top.Add(k, KeyType::kString, 7);
  auto v = top.Sorted();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].key, "a");
  EXPECT_EQ(v[1].key, "m");

  TopKeys none(0);
  none.Add("x", KeyType::kString, 1);
  EXPECT_TRUE(none.Sorted().empty());
}

TEST(ReportModelTest, Aggregates) {
  ReportModel m(Grouping(2), 2);
  m.Add("user:1:name", KeyType::kString, 100);
  m.Add("user:2:name", KeyType::kString, 60);
  m.Add("user:2:tags", KeyType::kSet, 300);
  m.Add("session:abc", KeyType::kHash, 1000);
  m.Add("counter", KeyType::kString, 50);
  m.AddVanished();
  m.AddDuplicate();
  EXPECT_EQ(m.keys(), 5u);
  EXPECT_EQ(m.bytes(), 1510u);
  EXPECT_EQ(m.vanished(), 1u);
  EXPECT_EQ(m.duplicates(), 1u);
  EXPECT_EQ(m.type_tally(KeyType::kString).keys, 3u);
  EXPECT_EQ(m.type_tally(KeyType::kString).bytes, 210u);
  EXPECT_EQ(m.type_tally(KeyType::kSet).bytes, 300u);
  auto groups = m.Groups();
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].prefix, "session:*");
  EXPECT_EQ(groups[1].prefix, "user:#:*");
  EXPECT_EQ(groups[1].tally.keys, 3u);
  EXPECT_EQ(groups[1].tally.bytes, 460u);
  EXPECT_EQ(groups[2].prefix, kNoPrefixGroup);
  auto top = m.Top();
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].key, "session:abc");
  EXPECT_EQ(top[1].key, "user:2:tags");
  uint64_t sum = 0;
  for (const auto& g : groups) sum += g.tally.bytes;
  EXPECT_EQ(sum, m.bytes());
}

TEST(ReportModelTest, MaxGroupsOverflowsIntoOther) {
  GroupingOptions g = Grouping(1, false);
  g.max_groups = 2;
  ReportModel m(g, 0);
  m.Add("a:1", KeyType::kString, 10);
  m.Add("b:1", KeyType::kString, 10);
  m.Add("c:1", KeyType::kString, 10);
  m.Add("d:1", KeyType::kString, 10);
  m.Add("a:2", KeyType::kString, 10);  // existing group still counts there
  auto groups = m.Groups();
  ASSERT_EQ(groups.size(), 3u);
  // Both hold 20 bytes; equal sizes sort by name, and "(" sorts before "a".
  EXPECT_EQ(groups[0].prefix, kOtherGroups);
  EXPECT_EQ(groups[0].tally.keys, 2u);
  EXPECT_EQ(groups[1].prefix, "a:*");
  EXPECT_EQ(groups[1].tally.keys, 2u);
  EXPECT_EQ(groups[2].prefix, "b:*");
}

}  // namespace
}  // namespace strata::mem
