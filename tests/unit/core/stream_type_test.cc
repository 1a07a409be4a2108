#include "core/stream_type.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "stream_test_util.h"

namespace strata {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// Sets the node limits for one test and puts the defaults back.
class NodeLimits {
 public:
  NodeLimits(int64_t max_bytes, int64_t max_entries) {
    GlobalStreamLimits().node_max_bytes = max_bytes;
    GlobalStreamLimits().node_max_entries = max_entries;
  }
  ~NodeLimits() {
    GlobalStreamLimits().node_max_bytes = 4096;
    GlobalStreamLimits().node_max_entries = 100;
  }
};

std::vector<std::string_view> Flat(const Fields& f) {
  std::vector<std::string_view> out;
  for (const auto& [k, v] : f) {
    out.push_back(k);
    out.push_back(v);
  }
  return out;
}

using test::Id;

StreamId AddExplicit(StreamObject& s, StreamId id, const Fields& f) {
  std::vector<std::string_view> fv = Flat(f);
  StreamId added;
  EXPECT_EQ(s.Add({StreamAddId::kExplicit, id}, fv, 0, &added), StreamStatus::kOk);
  return added;
}

Fields ToFields(const StreamEntry& e) {
  Fields f;
  for (const auto& [k, v] : e.fields) f.emplace_back(std::string(k), std::string(v));
  return f;
}

std::vector<std::pair<StreamId, Fields>> Collect(const StreamObject& s, StreamId start,
                                                 StreamId end, bool reverse = false,
                                                 size_t count = 0) {
  std::vector<std::pair<StreamId, Fields>> out;
  for (StreamIterator it = s.Range(start, end, reverse); it.Valid(); it.Next()) {
    out.emplace_back(it.id(), ToFields(it.entry()));
    if (count != 0 && out.size() == count) break;
  }
  return out;
}

std::vector<StreamId> Ids(const StreamObject& s) {
  std::vector<StreamId> out;
  for (StreamIterator it = s.Range(StreamId::Min(), StreamId::Max()); it.Valid(); it.Next()) {
    out.push_back(it.id());
  }
  return out;
}

// Node invariants: keys increasing, no empty node, counts add up to the length.
void CheckNodes(const StreamObject& s) {
  uint64_t live = 0;
  for (const auto& [base, node] : s.nodes()) {
    const stream_node::Header* h = stream_node::HeaderOf(node);
    ASSERT_GT(h->live, 0u);
    ASSERT_LE(h->dead, h->live);
    live += h->live;
  }
  ASSERT_EQ(live, s.Length());
}

TEST(StreamIdTest, ParsesTheCommandForms) {
  StreamId id;
  bool seq_given = false;
  ASSERT_TRUE(ParseStreamId("1526919030474-55", 0, true, &id, &seq_given));
  EXPECT_EQ(id, Id(1526919030474, 55));
  EXPECT_TRUE(seq_given);
  ASSERT_TRUE(ParseStreamId("12", 7, true, &id));
  EXPECT_EQ(id, Id(12, 7));
  ASSERT_TRUE(ParseStreamId("12-*", 0, true, &id, &seq_given));
  EXPECT_EQ(id, Id(12, 0));
  EXPECT_FALSE(seq_given);
  EXPECT_FALSE(ParseStreamId("12-*", 0, true, &id));  // no seq_given: "*" is not a number
  ASSERT_TRUE(ParseStreamId("-", 0, false, &id));
  EXPECT_EQ(id, StreamId::Min());
  ASSERT_TRUE(ParseStreamId("+", 0, false, &id));
  EXPECT_EQ(id, StreamId::Max());
  EXPECT_FALSE(ParseStreamId("+", 0, true, &id));
  ASSERT_TRUE(ParseStreamId("18446744073709551615-18446744073709551615", 0, true, &id));
  EXPECT_EQ(id, StreamId::Max());
  for (const char* bad :
       {"", "a", "1-", "-1", "1-2-3", "18446744073709551616", "1-x", " 1", "1.5", "1-+"}) {
    EXPECT_FALSE(ParseStreamId(bad, 0, true, &id)) << bad;
  }
  EXPECT_EQ(Id(5, 6).ToString(), "5-6");
}

TEST(StreamIdTest, IncrementAndDecrementCarry) {
  StreamId id{3, UINT64_MAX};
  ASSERT_TRUE(id.Increment());
  EXPECT_EQ(id, Id(4, 0));
  ASSERT_TRUE(id.Decrement());
  EXPECT_EQ(id, Id(3, UINT64_MAX));
  StreamId max = StreamId::Max();
  EXPECT_FALSE(max.Increment());
  EXPECT_EQ(max, StreamId::Max());
  StreamId min = StreamId::Min();
  EXPECT_FALSE(min.Decrement());
  EXPECT_EQ(min, StreamId::Min());
}

TEST(StreamIdTest, RangeBounds) {
  StreamId id;
  ASSERT_EQ(ParseStreamBound("5", false, &id), StreamBoundStatus::kOk);
  EXPECT_EQ(id, Id(5, 0));
  ASSERT_EQ(ParseStreamBound("5", true, &id), StreamBoundStatus::kOk);
  EXPECT_EQ(id, Id(5, UINT64_MAX));
  ASSERT_EQ(ParseStreamBound("(5-3", false, &id), StreamBoundStatus::kOk);
  EXPECT_EQ(id, Id(5, 4));
  ASSERT_EQ(ParseStreamBound("(5-0", true, &id), StreamBoundStatus::kOk);
  EXPECT_EQ(id, Id(4, UINT64_MAX));
  ASSERT_EQ(ParseStreamBound("(5", true, &id), StreamBoundStatus::kOk);
  EXPECT_EQ(id, Id(5, UINT64_MAX - 1));
  EXPECT_EQ(ParseStreamBound("(0-0", true, &id), StreamBoundStatus::kInvalidEnd);
  EXPECT_EQ(ParseStreamBound("(18446744073709551615-18446744073709551615", false, &id),
            StreamBoundStatus::kInvalidStart);
  EXPECT_EQ(ParseStreamBound("(-", false, &id), StreamBoundStatus::kInvalidId);
  EXPECT_EQ(ParseStreamBound("x", false, &id), StreamBoundStatus::kInvalidId);
  ASSERT_EQ(ParseStreamBound("-", false, &id), StreamBoundStatus::kOk);
  EXPECT_EQ(id, StreamId::Min());
}

TEST(StreamTest, AddGeneratesIdsAsRedisDoes) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  std::vector<std::string_view> fv = {"f", "v"};
  StreamId id;
  ASSERT_EQ(s.Add({}, fv, 1000, &id), StreamStatus::kOk);
  EXPECT_EQ(id, Id(1000, 0));
  ASSERT_EQ(s.Add({}, fv, 1000, &id), StreamStatus::kOk);
  EXPECT_EQ(id, Id(1000, 1));
  ASSERT_EQ(s.Add({}, fv, 999, &id), StreamStatus::kOk);  // the clock went back
  EXPECT_EQ(id, Id(1000, 2));
  ASSERT_EQ(s.Add({StreamAddId::kPartial, Id(1000, 0)}, fv, 0, &id), StreamStatus::kOk);
  EXPECT_EQ(id, Id(1000, 3));
  ASSERT_EQ(s.Add({StreamAddId::kPartial, Id(2000, 0)}, fv, 0, &id), StreamStatus::kOk);
  EXPECT_EQ(id, Id(2000, 0));
  EXPECT_EQ(s.Add({StreamAddId::kPartial, Id(1999, 0)}, fv, 0, &id), StreamStatus::kIdTooSmall);
  EXPECT_EQ(s.Add({StreamAddId::kExplicit, Id(2000, 0)}, fv, 0, &id), StreamStatus::kIdTooSmall);
  EXPECT_EQ(s.Add({StreamAddId::kExplicit, Id(0, 0)}, fv, 0, &id), StreamStatus::kIdZero);
  ASSERT_EQ(s.Add({StreamAddId::kExplicit, Id(2000, 7)}, fv, 0, &id), StreamStatus::kOk);
  EXPECT_EQ(s.Length(), 6u);
  EXPECT_EQ(s.entries_added(), 6u);
  EXPECT_EQ(s.last_id(), Id(2000, 7));
  EXPECT_EQ(s.first_id(), Id(1000, 0));
  EXPECT_EQ(s.last_entry_id(), Id(2000, 7));

  // The ID space runs out at its top.
  ASSERT_EQ(s.SetId(Id(UINT64_MAX, UINT64_MAX - 1), -1, Id(0, 0)), StreamStatus::kOk);
  ASSERT_EQ(s.Add({}, fv, 5, &id), StreamStatus::kOk);
  EXPECT_EQ(id, StreamId::Max());
  EXPECT_EQ(s.Add({}, fv, 5, &id), StreamStatus::kIdExhausted);
  EXPECT_EQ(s.Length(), 7u);

  auto t_owner = std::make_unique<StreamObject>();

  StreamObject& t = *t_owner;
  ASSERT_EQ(t.Add({StreamAddId::kPartial, Id(0, 0)}, fv, 0, &id), StreamStatus::kOk);
  EXPECT_EQ(id, Id(0, 1));
  ASSERT_EQ(t.SetId(Id(7, UINT64_MAX), -1, Id(0, 0)), StreamStatus::kOk);
  EXPECT_EQ(t.Add({StreamAddId::kPartial, Id(7, 0)}, fv, 0, &id), StreamStatus::kIdTooSmall);
  ASSERT_EQ(t.Add({}, fv, 0, &id), StreamStatus::kOk);
  EXPECT_EQ(id, Id(8, 0));
}

TEST(StreamTest, StoresAndReturnsEveryKindOfEntry) {
  NodeLimits limits(300, 8);
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  std::vector<std::pair<StreamId, Fields>> ref;
  std::string binary(40, '\0');
  for (size_t i = 0; i < binary.size(); i++) binary[i] = static_cast<char>(0x80 + i);
  std::vector<Fields> shapes = {
      {{"name", "alice"}, {"age", "30"}},
      {{"name", "bob"}, {"age", "4"}},
      {{"name", "carol-the-long-text-value-of-ascii"}, {"age", "31"}},
      {{"other", "x"}},
      {{"name", ""}, {"age", ""}},
      {{"bin", binary}, {"f", std::string(600, 'q')}},  // larger than a node
      {{"name", "alice"}, {"age", "30"}, {"extra", "1"}},
      {{"", "empty field name"}},
  };
  StreamId id{100, 0};
  for (int round = 0; round < 20; round++) {
    for (const Fields& f : shapes) {
      AddExplicit(s, id, f);
      ref.emplace_back(id, f);
      // Same millisecond (small and large sequence steps) or a new one.
      if (round % 4 == 0) {
        id.seq += 1 + static_cast<uint64_t>(round) * 100;
      } else {
        id = StreamId{id.ms + 1 + static_cast<uint64_t>(round), round % 3 == 0 ? 0u : 5u};
      }
    }
  }
  CheckNodes(s);
  EXPECT_GT(s.node_count(), 10u);
  EXPECT_EQ(Collect(s, StreamId::Min(), StreamId::Max()), ref);
  auto rev = Collect(s, StreamId::Min(), StreamId::Max(), true);
  std::reverse(rev.begin(), rev.end());
  EXPECT_EQ(rev, ref);
  for (size_t i = 0; i < ref.size(); i += 7) {
    auto one = Collect(s, ref[i].first, ref[i].first);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0], ref[i]);
    EXPECT_TRUE(s.Contains(ref[i].first));
  }
  EXPECT_FALSE(s.Contains(Id(1, 1)));

  // Deleting two of every three entries compacts nodes; what is left reads back the same.
  std::vector<std::pair<StreamId, Fields>> kept;
  size_t before = s.Bytes();
  for (size_t i = 0; i < ref.size(); i++) {
    if (i % 3 == 1) {
      kept.push_back(ref[i]);
    } else {
      ASSERT_TRUE(s.Delete(ref[i].first));
    }
  }
  CheckNodes(s);
  EXPECT_LT(s.Bytes(), before / 2);
  EXPECT_EQ(Collect(s, StreamId::Min(), StreamId::Max()), kept);
  rev = Collect(s, StreamId::Min(), StreamId::Max(), true);
  std::reverse(rev.begin(), rev.end());
  EXPECT_EQ(rev, kept);
}

// Random adds, deletes, exact trims and ranges against a std::map.
class StreamRandomTest : public ::testing::TestWithParam<int> {};

TEST_P(StreamRandomTest, MatchesAMap) {
  int param = GetParam();
  NodeLimits limits(param == 0 ? 4096 : 160 + param * 50, param == 0 ? 100 : 3 + param);
  std::mt19937_64 rng(1234 + param);
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  std::map<StreamId, Fields> ref;
  uint64_t ms = 1;
  auto random_fields = [&]() {
    Fields f;
    int shape = static_cast<int>(rng() % 4);
    size_t n = shape == 3 ? 1 + rng() % 4 : 3;
    for (size_t i = 0; i < n; i++) {
      std::string name = shape == 3 ? "k" + std::to_string(rng() % 5) : "field" + std::to_string(i);
      size_t len = shape == 0 ? 10 : rng() % 40;
      std::string v(len, ' ');
      for (char& c : v) c = static_cast<char>(shape == 2 ? rng() % 256 : 'a' + rng() % 26);
      f.emplace_back(name, v);
    }
    return f;
  };
  auto random_id = [&]() {
    if (ref.empty()) return Id(rng() % 1000, rng() % 3);
    auto it = ref.begin();
    std::advance(it, static_cast<long>(rng() % ref.size()));
    return it->first;
  };
  uint64_t deleted_total = 0;
  for (int op = 0; op < 20000; op++) {
    int what = static_cast<int>(rng() % 100);
    if (what < 55) {
      Fields f = random_fields();
      std::vector<std::string_view> fv = Flat(f);
      StreamId id;
      if (rng() % 2 == 0) ms += rng() % 3;
      ASSERT_EQ(s.Add({}, fv, static_cast<int64_t>(ms), &id), StreamStatus::kOk);
      ref.emplace(id, f);
    } else if (what < 75) {
      StreamId id = random_id();
      if (rng() % 4 == 0) id.seq += 1;
      bool had = ref.erase(id) == 1;
      ASSERT_EQ(s.Delete(id), had);
      if (had) deleted_total++;
    } else if (what < 80) {
      uint64_t max_len = ref.size() > 0 ? rng() % (ref.size() + 5) : 0;
      StreamTrimSpec t;
      t.strategy = StreamTrimSpec::kMaxLen;
      t.max_len = max_len;
      uint64_t expect = ref.size() > max_len ? ref.size() - max_len : 0;
      ASSERT_EQ(s.Trim(t), expect);
      while (ref.size() > max_len) ref.erase(ref.begin());
    } else if (what < 84) {
      StreamTrimSpec t;
      t.strategy = StreamTrimSpec::kMinId;
      t.min_id = random_id();
      uint64_t expect = 0;
      while (!ref.empty() && ref.begin()->first < t.min_id) {
        ref.erase(ref.begin());
        expect++;
      }
      ASSERT_EQ(s.Trim(t), expect);
    } else {
      StreamId a = random_id(), b = random_id();
      if (b < a) std::swap(a, b);
      bool reverse = rng() % 2;
      size_t count = rng() % 3 == 0 ? 0 : 1 + rng() % 20;
      std::vector<std::pair<StreamId, Fields>> want;
      if (!reverse) {
        for (auto it = ref.lower_bound(a); it != ref.end() && it->first <= b; ++it) {
          want.emplace_back(it->first, it->second);
          if (count != 0 && want.size() == count) break;
        }
      } else {
        for (auto it = ref.upper_bound(b); it != ref.begin();) {
          --it;
          if (it->first < a) break;
          want.emplace_back(it->first, it->second);
          if (count != 0 && want.size() == count) break;
        }
      }
      ASSERT_EQ(Collect(s, a, b, reverse, count), want) << "op " << op;
    }
    ASSERT_EQ(s.Length(), ref.size());
    ASSERT_EQ(s.first_id(), ref.empty() ? StreamId::Min() : ref.begin()->first);
    ASSERT_EQ(s.last_entry_id(), ref.empty() ? StreamId::Min() : ref.rbegin()->first);
    if (op % 200 == 0) CheckNodes(s);
  }
  CheckNodes(s);
  std::vector<std::pair<StreamId, Fields>> all(ref.begin(), ref.end());
  EXPECT_EQ(Collect(s, StreamId::Min(), StreamId::Max()), all);
  EXPECT_GT(deleted_total, 0u);
}

INSTANTIATE_TEST_SUITE_P(StreamNodeShapes, StreamRandomTest, ::testing::Values(0, 1, 2, 5, 20));

TEST(StreamTest, DeleteTracksTombstonesAndFreesNodes) {
  NodeLimits limits(4096, 10);
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  for (uint64_t i = 1; i <= 30; i++) AddExplicit(s, Id(i, 0), {{"f", "v" + std::to_string(i)}});
  EXPECT_EQ(s.node_count(), 3u);
  EXPECT_FALSE(s.Delete(Id(31, 0)));
  ASSERT_TRUE(s.Delete(Id(1, 0)));
  EXPECT_FALSE(s.Delete(Id(1, 0)));
  EXPECT_EQ(s.first_id(), Id(2, 0));
  EXPECT_EQ(s.max_deleted_id(), Id(1, 0));
  ASSERT_TRUE(s.Delete(Id(30, 0)));
  EXPECT_EQ(s.last_entry_id(), Id(29, 0));
  EXPECT_EQ(s.last_id(), Id(30, 0));
  EXPECT_EQ(s.max_deleted_id(), Id(30, 0));
  ASSERT_TRUE(s.Delete(Id(15, 0)));
  EXPECT_EQ(s.max_deleted_id(), Id(30, 0));  // the largest deleted ID stays
  // Emptying the middle node frees it.
  for (uint64_t i = 11; i <= 20; i++) s.Delete(Id(i, 0));
  EXPECT_EQ(s.node_count(), 2u);
  EXPECT_EQ(s.Length(), 18u);
  CheckNodes(s);
  // Tombstones outnumbering live entries get compacted away, and memory follows.
  size_t before = s.Bytes();
  for (uint64_t i = 2; i <= 8; i++) s.Delete(Id(i, 0));
  CheckNodes(s);
  EXPECT_LT(s.Bytes(), before);
  EXPECT_EQ(Collect(s, Id(0, 0), Id(10, 0)).size(), 2u);
  // New entries still append after a compacted last node.
  s.Delete(Id(29, 0));
  s.Delete(Id(28, 0));
  for (uint64_t i = 21; i <= 27; i++) s.Delete(Id(i, 0));
  CheckNodes(s);
  AddExplicit(s, Id(40, 0), {{"f", "new"}});
  EXPECT_EQ(Ids(s), (std::vector<StreamId>{Id(9, 0), Id(10, 0), Id(40, 0)}));
  for (StreamId id : Ids(s)) ASSERT_TRUE(s.Delete(id));
  EXPECT_EQ(s.Length(), 0u);
  EXPECT_EQ(s.node_count(), 0u);
  EXPECT_EQ(s.first_id(), StreamId::Min());
  EXPECT_EQ(s.last_entry_id(), StreamId::Min());
  EXPECT_EQ(s.last_id(), Id(40, 0));
}

TEST(StreamTest, ReusedIdAboveATombstoneStartsANode) {
  // XDEL the top entry, lower max-deleted-id with XSETID, then add the same ID again.
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  for (uint64_t i = 1; i <= 3; i++) AddExplicit(s, Id(1, i), {{"f", "v"}});
  ASSERT_TRUE(s.Delete(Id(1, 3)));
  ASSERT_EQ(s.SetId(Id(1, 3), -1, Id(1, 1)), StreamStatus::kOk);
  ASSERT_EQ(s.SetId(Id(1, 2), -1, Id(0, 0)), StreamStatus::kOk);
  AddExplicit(s, Id(1, 3), {{"f", "again"}});
  EXPECT_EQ(Ids(s), (std::vector<StreamId>{Id(1, 1), Id(1, 2), Id(1, 3)}));
  auto last = Collect(s, Id(1, 3), Id(1, 3));
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].second, (Fields{{"f", "again"}}));
  auto rev = Collect(s, StreamId::Min(), StreamId::Max(), true);
  ASSERT_EQ(rev.size(), 3u);
  EXPECT_EQ(rev[0].first, Id(1, 3));
  ASSERT_TRUE(s.Delete(Id(1, 3)));
  EXPECT_EQ(s.last_entry_id(), Id(1, 2));
  CheckNodes(s);
}

TEST(StreamTest, ApproximateTrimRemovesWholeNodesOnly) {
  NodeLimits limits(4096, 10);
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  for (uint64_t i = 1; i <= 95; i++) AddExplicit(s, Id(i, 0), {{"f", "v"}});
  StreamTrimSpec t;
  t.strategy = StreamTrimSpec::kMaxLen;
  t.approx = true;
  t.max_len = 50;
  EXPECT_EQ(s.Trim(t), 40u);  // four nodes of ten; a fifth would leave 45
  EXPECT_EQ(s.Length(), 55u);
  EXPECT_EQ(s.first_id(), Id(41, 0));
  t.approx = false;
  EXPECT_EQ(s.Trim(t), 5u);
  EXPECT_EQ(s.Length(), 50u);
  EXPECT_EQ(s.first_id(), Id(46, 0));
  EXPECT_EQ(s.max_deleted_id(), StreamId::Min());  // trimming leaves it alone

  // MINID, approximate then exact.
  t = StreamTrimSpec{};
  t.strategy = StreamTrimSpec::kMinId;
  t.approx = true;
  t.min_id = Id(73, 0);
  EXPECT_EQ(s.Trim(t), 25u);  // the nodes ending at 50, 60 and 70
  EXPECT_EQ(s.first_id(), Id(71, 0));
  t.approx = false;
  EXPECT_EQ(s.Trim(t), 2u);
  EXPECT_EQ(s.first_id(), Id(73, 0));

  // LIMIT stops before a node that would pass it.
  t = StreamTrimSpec{};
  t.strategy = StreamTrimSpec::kMaxLen;
  t.approx = true;
  t.max_len = 0;
  t.limit = 15;
  EXPECT_EQ(s.Trim(t), 8u);  // the rest of the node of 73..80; the next would make 18
  EXPECT_EQ(s.first_id(), Id(81, 0));
  t.limit = 0;
  EXPECT_EQ(s.Trim(t), 15u);
  EXPECT_EQ(s.Length(), 0u);
  EXPECT_EQ(s.first_id(), StreamId::Min());
  EXPECT_EQ(s.node_count(), 0u);
  EXPECT_EQ(s.Trim(t), 0u);
}

TEST(StreamTest, SetIdChecksAsRedisDoes) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  EXPECT_EQ(s.SetId(Id(5, 0), 3, Id(0, 0)), StreamStatus::kOk);  // empty: any entries-added
  EXPECT_EQ(s.entries_added(), 3u);
  for (uint64_t i = 6; i <= 8; i++) AddExplicit(s, Id(i, 0), {{"a", "b"}});
  ASSERT_TRUE(s.Delete(Id(8, 0)));
  EXPECT_EQ(s.SetId(Id(7, 0), -1, Id(7, 5)), StreamStatus::kSetIdBelowGivenMaxDeleted);
  EXPECT_EQ(s.SetId(Id(7, 0), -1, Id(0, 0)), StreamStatus::kSetIdBelowMaxDeleted);
  EXPECT_EQ(s.SetId(Id(9, 0), 1, Id(0, 0)), StreamStatus::kEntriesAddedBelowLength);
  EXPECT_EQ(s.last_id(), Id(8, 0));
  EXPECT_EQ(s.SetId(Id(9, 0), 2, Id(8, 5)), StreamStatus::kOk);
  EXPECT_EQ(s.last_id(), Id(9, 0));
  EXPECT_EQ(s.entries_added(), 2u);
  EXPECT_EQ(s.max_deleted_id(), Id(8, 5));
  ASSERT_TRUE(s.Delete(Id(7, 0)));
  ASSERT_EQ(s.SetId(Id(9, 0), -1, Id(1, 0)), StreamStatus::kOk);  // MAXDELETEDID may go down
  EXPECT_EQ(s.SetId(Id(5, 0), -1, Id(0, 0)), StreamStatus::kSetIdBelowTop);
  EXPECT_STREQ(StreamStatusMessage(StreamStatus::kSetIdBelowTop),
               "ERR The ID specified in XSETID is smaller than the target stream top item");
}

TEST(StreamTest, RefusesTooLargeEntries) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  std::string big(kStreamEntryBytesMax / 2 + 1, 'x');
  std::vector<std::string_view> fv = {big, big};
  StreamId id;
  EXPECT_EQ(s.Add({}, fv, 1, &id), StreamStatus::kTooLarge);
  EXPECT_EQ(s.Length(), 0u);
}

TEST(StreamTest, RangesSeekIntoLargeStreams) {
  // 200k entries: a COUNT 10 range from the middle, either way. The iterator positions
  // with one map search and decodes lazily (a node at most before the first match).
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  std::vector<std::string_view> fv = {"f", "value-of-some-length"};
  StreamId id;
  for (int i = 0; i < 200000; i++) ASSERT_EQ(s.Add({}, fv, 1000 + i / 7, &id), StreamStatus::kOk);
  StreamId mid{1000 + 100000 / 7, 3};
  size_t n = 0;
  for (StreamIterator it = s.Range(mid, StreamId::Max()); it.Valid() && n < 10; it.Next()) n++;
  EXPECT_EQ(n, 10u);
  n = 0;
  for (StreamIterator it = s.Range(StreamId::Min(), mid, true); it.Valid() && n < 10; it.Next())
    n++;
  EXPECT_EQ(n, 10u);
  // An empty range and a reversed one.
  EXPECT_FALSE(s.Range(Id(5, 0), Id(4, 0)).Valid());
  EXPECT_FALSE(s.Range(Id(1, 0), Id(2, 0)).Valid());
  EXPECT_FALSE(s.Range(Id(1, 0), Id(2, 0), true).Valid());
  EXPECT_FALSE(s.Range(Id(UINT64_MAX, 0), StreamId::Max(), true).Valid());
}

// The memory target: 5 fields of 10-byte random printable values per entry.
TEST(StreamTest, BytesPerEntryOfATypicalStream) {
  constexpr int kEntries = 100000;
  std::mt19937_64 rng(7);
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  size_t empty = s.Bytes();
  std::vector<std::string> values(5, std::string(10, ' '));
  const std::string names[5] = {"f1", "f2", "f3", "f4", "f5"};
  std::vector<std::string_view> fv(10);
  int64_t now = 1700000000000;
  for (int i = 0; i < kEntries; i++) {
    for (int k = 0; k < 5; k++) {
      for (char& c : values[k]) c = alphabet[rng() % alphabet.size()];
      fv[2 * k] = names[k];
      fv[2 * k + 1] = values[k];
    }
    if (i % 20 == 0) now++;  // about 20 entries per millisecond, as a pipelined XADD * fills
    StreamId id;
    ASSERT_EQ(s.Add({}, fv, now, &id), StreamStatus::kOk);
  }
  double per_entry = static_cast<double>(s.Bytes() - empty) / kEntries;
  std::printf("stream: %.2f bytes per entry (%zu nodes; Redis 7.0.15 measured 70.5)\n", per_entry,
              s.node_count());
  // Redis 7.0.15 takes 70.5 bytes per such entry (used_memory growth over 1M XADDs with the
  // default node sizes); the target is at most 0.8x that, 56.4. The encoding gives ~47.
  EXPECT_LE(per_entry, 50.0);
  // Reading everything back returns the entries intact (spot check the last one).
  StreamIterator last = s.Range(StreamId::Min(), StreamId::Max(), true);
  ASSERT_TRUE(last.Valid());
  ASSERT_EQ(last.entry().fields.size(), 5u);
  EXPECT_EQ(last.entry().fields[4].second, values[4]);
  EXPECT_EQ(last.entry().fields[0].first, "f1");
}

TEST(StreamTest, BytesReturnToTheEmptyFigure) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  size_t empty = s.Bytes();
  std::vector<std::string_view> fv = {"field", "value"};
  StreamId id;
  for (int i = 0; i < 1000; i++) ASSERT_EQ(s.Add({}, fv, i, &id), StreamStatus::kOk);
  EXPECT_GT(s.Bytes(), empty + 1000 * 5);
  StreamTrimSpec t;
  t.strategy = StreamTrimSpec::kMaxLen;
  t.max_len = 0;
  EXPECT_EQ(s.Trim(t), 1000u);
  EXPECT_EQ(s.Bytes(), empty);
}

TEST(StreamTest, ReleaseSomeFreesInSlices) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  std::vector<std::string_view> fv = {"field", "value"};
  StreamId id;
  for (int i = 0; i < 5000; i++) ASSERT_EQ(s.Add({}, fv, i, &id), StreamStatus::kOk);
  s.CreateGroup("g", StreamId::Min(), -1);
  size_t left = s.ReleaseSome(1000);
  EXPECT_LT(left, 5000u);
  EXPECT_GT(left, 0u);
  EXPECT_TRUE(s.groups().empty());
  while (left > 0) left = s.ReleaseSome(1000);
  EXPECT_EQ(s.node_count(), 0u);
}

}  // namespace
}  // namespace strata
