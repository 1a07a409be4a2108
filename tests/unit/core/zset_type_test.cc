#include "core/zset_type.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/keyspace.h"
#include "core/packed_list.h"
#include "core/slab.h"

namespace strata {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using Model = std::set<std::pair<double, std::string>>;

// Restores the default limits when a test changes them.
class LimitsGuard {
 public:
  LimitsGuard()
      : entries_(GlobalEncodingLimits().zset_max_listpack_entries.load()),
        value_(GlobalEncodingLimits().zset_max_listpack_value.load()) {}
  ~LimitsGuard() {
    GlobalEncodingLimits().zset_max_listpack_entries = entries_;
    GlobalEncodingLimits().zset_max_listpack_value = value_;
  }

 private:
  int64_t entries_, value_;
};

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

Model Contents(const Entry* e) {
  Model m;
  ZSetReader r(e);
  if (r.size() == 0) return m;
  r.Walk(0, false, [&](std::string_view member, double score) {
    m.emplace(score, std::string(member));
    return true;
  });
  return m;
}

std::vector<std::string> InOrder(const Entry* e) {
  std::vector<std::string> out;
  ZSetReader r(e);
  if (r.size() == 0) return out;
  r.Walk(0, false, [&](std::string_view member, double) {
    out.emplace_back(member);
    return true;
  });
  return out;
}

int Add(Keyspace& ks, const std::string& key, const std::string& member, double score,
        int flags = 0, double* newscore = nullptr) {
  Entry* e = ks.Find(0, key, 0);
  ZSetEditor ed(ks, 0, key, e);
  int out = 0;
  double unused = 0;
  ed.Add(member, score, flags, &out, newscore != nullptr ? newscore : &unused);
  ed.Commit();
  return out;
}

TEST(ZScoreCodecTest, RoundTripsEveryKindOfDouble) {
  std::vector<double> values = {0.0,
                                -0.0,
                                1,
                                -1,
                                9999999,
                                10000000,
                                -999999,
                                -1000000,
                                1.5,
                                0.1,
                                -2.25,
                                1e20,
                                -1e300,
                                9007199254740993.0,
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::lowest(),
                                kInf,
                                -kInf};
  for (double v : values) {
    char buf[8];
    std::string_view item = zscore::Encode(v, buf);
    EXPECT_LE(item.size(), 8u);
    EXPECT_TRUE(SameBits(zscore::Decode(item), v)) << v;
  }
  char buf[8];
  EXPECT_EQ(zscore::Encode(0, buf), "0");
  EXPECT_EQ(zscore::Encode(-42, buf), "-42");
  EXPECT_EQ(zscore::Encode(9999999, buf), "9999999");
  EXPECT_EQ(zscore::Encode(-999999, buf), "-999999");
  EXPECT_EQ(zscore::Encode(10000000, buf).size(), 8u);  // 8 digits: raw is no longer
  EXPECT_EQ(zscore::Encode(-1000000, buf).size(), 8u);
  EXPECT_EQ(zscore::Encode(-0.0, buf).size(), 8u);
  EXPECT_EQ(zscore::Encode(0.5, buf).size(), 8u);
}

TEST(ZPackedTest, EncodeDecodeAndValidate) {
  std::vector<ZMember> items = {{"a", -kInf}, {"b", 0}, {"a2", 1.5}, {"c", 1.5}, {"z", kInf}};
  std::string buf = zpacked::Encode(items);
  EXPECT_TRUE(zpacked::Valid(buf));
  EXPECT_STREQ(PackedEncodingName(ValueType::kZSet, buf), "listpack");
  std::vector<ZMember> back;
  zpacked::Decode(buf, &back);
  ASSERT_EQ(back.size(), items.size());
  for (size_t i = 0; i < items.size(); i++) {
    EXPECT_EQ(back[i].member, items[i].member);
    EXPECT_EQ(back[i].score, items[i].score);
  }
  // Out of order, duplicates, odd counts and NaN are rejected.
  std::vector<ZMember> unsorted = {{"b", 1}, {"a", 1}};
  EXPECT_FALSE(zpacked::Valid(zpacked::Encode(unsorted)));
  std::vector<ZMember> dup = {{"a", 1}, {"a", 1}};
  EXPECT_FALSE(zpacked::Valid(zpacked::Encode(dup)));
  packed::Builder odd;
  odd.Add("a");
  EXPECT_FALSE(zpacked::Valid(odd.Finish()));
  std::vector<ZMember> nan = {{"a", std::nan("")}};
  EXPECT_FALSE(zpacked::Valid(zpacked::Encode(nan)));
  EXPECT_FALSE(zpacked::Valid("x"));
}

TEST(ZSetEditorTest, SmallFormAddsInOrderAndAppliesFlags) {
  Keyspace ks(1);
  EXPECT_EQ(Add(ks, "z", "b", 2), kZAddAdded);
  EXPECT_EQ(Add(ks, "z", "a", 2), kZAddAdded);
  EXPECT_EQ(Add(ks, "z", "c", 1), kZAddAdded);
  Entry* e = ks.Find(0, "z", 0);
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->IsExternal());
  EXPECT_EQ(e->Type(), ValueType::kZSet);
  EXPECT_TRUE(zpacked::Valid(e->ValueString()));
  EXPECT_EQ(InOrder(e), (std::vector<std::string>{"c", "a", "b"}));
  // Same score: nothing changes.
  EXPECT_EQ(Add(ks, "z", "a", 2), 0);
  EXPECT_EQ(Add(ks, "z", "a", 5, kZAddNx), kZAddNop);
  EXPECT_EQ(Add(ks, "z", "new", 5, kZAddXx), kZAddNop);
  EXPECT_EQ(Add(ks, "z", "a", 1, kZAddGt), kZAddNop);
  EXPECT_EQ(Add(ks, "z", "a", 3, kZAddLt), kZAddNop);
  EXPECT_EQ(Add(ks, "z", "a", 3, kZAddGt), kZAddUpdated);
  double ns = 0;
  EXPECT_EQ(Add(ks, "z", "a", 4, kZAddIncr, &ns), kZAddUpdated);
  EXPECT_EQ(ns, 7);
  EXPECT_EQ(Add(ks, "z", "a", kInf, kZAddIncr), kZAddUpdated);
  EXPECT_EQ(Add(ks, "z", "a", -kInf, kZAddIncr), kZAddNaN);  // inf + -inf
  EXPECT_EQ(Add(ks, "z", "x", std::nan(""), 0), kZAddNaN);
  e = ks.Find(0, "z", 0);
  ZSetReader r(e);
  double s = 0;
  ASSERT_TRUE(r.Score("a", &s));
  EXPECT_EQ(s, kInf);
  EXPECT_FALSE(r.Score("x", &s));
  size_t rank = 0;
  ASSERT_TRUE(r.Rank("a", &rank, &s));
  EXPECT_EQ(rank, 2u);
}

TEST(ZSetEditorTest, NegativeZeroIsZeroInTheSmallFormOnly) {
  Keyspace ks(1);
  Add(ks, "small", "m", -0.0);
  double s = 1;
  ASSERT_TRUE(ZSetReader(ks.Find(0, "small", 0)).Score("m", &s));
  EXPECT_TRUE(SameBits(s, 0.0));

  LimitsGuard guard;
  GlobalEncodingLimits().zset_max_listpack_entries = 0;
  Add(ks, "big", "m", -0.0);
  Entry* e = ks.Find(0, "big", 0);
  ASSERT_TRUE(e->IsExternal());
  ASSERT_TRUE(ZSetReader(e).Score("m", &s));
  EXPECT_TRUE(SameBits(s, -0.0));
}

TEST(ZSetEditorTest, ConvertsPastEitherLimitAndNeverBack) {
  LimitsGuard guard;
  GlobalEncodingLimits().zset_max_listpack_entries = 4;
  GlobalEncodingLimits().zset_max_listpack_value = 8;
  Keyspace ks(1);
  for (int i = 0; i < 4; i++) Add(ks, "z", "m" + std::to_string(i), i);
  EXPECT_FALSE(ks.Find(0, "z", 0)->IsExternal());
  Add(ks, "z", "m4", 4);
  Entry* e = ks.Find(0, "z", 0);
  ASSERT_TRUE(e->IsExternal());
  EXPECT_STREQ(e->Object()->Encoding(), "skiplist");
  EXPECT_EQ(InOrder(e), (std::vector<std::string>{"m0", "m1", "m2", "m3", "m4"}));
  {
    ZSetEditor ed(ks, 0, "z", e);
    EXPECT_TRUE(ed.Remove("m4"));
    EXPECT_TRUE(ed.Remove("m3"));
    EXPECT_FALSE(ed.Remove("m3"));
    ed.Commit();
  }
  EXPECT_TRUE(ks.Find(0, "z", 0)->IsExternal());

  Add(ks, "long", "short", 1);
  EXPECT_FALSE(ks.Find(0, "long", 0)->IsExternal());
  Add(ks, "long", "123456789", 2);  // 9 bytes > 8
  EXPECT_TRUE(ks.Find(0, "long", 0)->IsExternal());
  Add(ks, "first-long", "0123456789", 2);
  EXPECT_TRUE(ks.Find(0, "first-long", 0)->IsExternal());
}

TEST(ZSetEditorTest, TtlIsKeptAndEmptiedSetsAreDeleted) {
  Keyspace ks(1);
  Entry* e = ks.SetRaw(0, "z", zpacked::Encode({{"a", 1}, {"b", 2}}), ValueType::kZSet, 5000);
  {
    ZSetEditor ed(ks, 0, "z", e);
    int out;
    ed.Add("c", 3, 0, &out, nullptr);
    ed.Commit();
  }
  e = ks.Find(0, "z", 0);
  EXPECT_EQ(e->ExpireMs(), 5000);
  {
    ZSetEditor ed(ks, 0, "z", e);
    std::vector<std::pair<std::string, double>> got;
    ed.Pop(true, 2, &got);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].first, "c");
    EXPECT_EQ(got[1].first, "b");
    ed.Pop(false, 10, &got);
    EXPECT_EQ(got.size(), 3u);
    ed.Commit();
  }
  EXPECT_EQ(ks.Find(0, "z", 0), nullptr);
  EXPECT_EQ(ks.type_bytes(ValueType::kZSet), 0u);
  EXPECT_EQ(ks.type_keys(ValueType::kZSet), 0u);
  // XX on a missing key creates nothing.
  EXPECT_EQ(Add(ks, "none", "a", 1, kZAddXx), kZAddNop);
  EXPECT_EQ(ks.Find(0, "none", 0), nullptr);
}

TEST(ZSetEditorTest, RemoveRanksOnBothForms) {
  LimitsGuard guard;
  for (int64_t limit : {128, 0}) {
    GlobalEncodingLimits().zset_max_listpack_entries = limit;
    Keyspace ks(1);
    for (int i = 0; i < 100; i++) Add(ks, "z", "m" + std::to_string(i), i);
    Entry* e = ks.Find(0, "z", 0);
    EXPECT_EQ(e->IsExternal(), limit == 0);
    {
      ZSetEditor ed(ks, 0, "z", e);
      ed.RemoveRanks(10, 89);
      EXPECT_EQ(ed.size(), 20u);
      ed.Commit();
    }
    e = ks.Find(0, "z", 0);
    std::vector<std::string> order = InOrder(e);
    ASSERT_EQ(order.size(), 20u);
    EXPECT_EQ(order[9], "m9");
    EXPECT_EQ(order[10], "m90");
    {
      ZSetEditor ed(ks, 0, "z", e);
      ed.RemoveRanks(0, 19);
      ed.Commit();
    }
    EXPECT_EQ(ks.Find(0, "z", 0), nullptr);
    EXPECT_EQ(ks.used_bytes(), ks.table_bytes());
    EXPECT_EQ(ks.type_bytes(ValueType::kZSet), 0u);
  }
}

TEST(ZSetStoreTest, StoreMaterializeAndSerializeRoundTrip) {
  LimitsGuard guard;
  Keyspace ks(1);
  std::vector<std::string> names;
  for (int i = 0; i < 300; i++) names.push_back("member:" + std::to_string(i));
  std::vector<ZMember> items;
  for (int i = 0; i < 300; i++) items.push_back({names[i], i % 7 == 0 ? -0.0 : (i * 0.5 - 20)});
  StoreZSet(ks, 0, "big", &items);
  Entry* big = ks.Find(0, "big", 0);
  ASSERT_TRUE(big->IsExternal());
  EXPECT_EQ(big->Object()->Length(), 300u);
  std::string ser = Keyspace::Serialize(big);
  EXPECT_TRUE(zpacked::Valid(ser));
  Entry* copy = ks.SetRaw(0, "copy", ser, ValueType::kZSet, Entry::kNoExpire);
  EXPECT_TRUE(copy->IsExternal());
  EXPECT_EQ(Contents(copy), Contents(ks.Find(0, "big", 0)));

  std::vector<ZMember> few = {{"x", 3}, {"y", -0.0}, {"w", 3}};
  StoreZSet(ks, 0, "small", &few);
  Entry* small = ks.Find(0, "small", 0);
  EXPECT_FALSE(small->IsExternal());
  EXPECT_EQ(InOrder(small), (std::vector<std::string>{"y", "w", "x"}));
  EXPECT_EQ(MaterializeZSet(small->ValueString(), ks.heap()), nullptr);
  double s = 1;
  ASSERT_TRUE(ZSetReader(small).Score("y", &s));
  EXPECT_TRUE(SameBits(s, 0.0));

  std::vector<ZMember> none;
  StoreZSet(ks, 0, "small", &none);
  EXPECT_EQ(ks.Find(0, "small", 0), nullptr);

  // A small serialized set materializes big once the limit is lowered.
  GlobalEncodingLimits().zset_max_listpack_entries = 2;
  std::unique_ptr<CollectionObject> obj =
      MaterializeZSet(zpacked::Encode({{"a", 1}, {"b", 2}, {"c", 3}}), ks.heap());
  ASSERT_NE(obj, nullptr);
  EXPECT_EQ(obj->Length(), 3u);
  EXPECT_STREQ(obj->Encoding(), "skiplist");
}

// Random operations on both forms against a model, with rank, select and score ranges.
void RandomAgainstModel(int64_t limit, uint64_t seed) {
  LimitsGuard guard;
  GlobalEncodingLimits().zset_max_listpack_entries = limit;
  Keyspace ks(1);
  std::mt19937_64 rng(seed);
  Model model;
  std::map<std::string, double> scores;
  for (int step = 0; step < 4000; step++) {
    int op = static_cast<int>(rng() % 10);
    Entry* e = ks.Find(0, "z", 0);
    if (op < 6) {
      std::string m = "m" + std::to_string(rng() % 400);
      double s = static_cast<double>(static_cast<int>(rng() % 40) - 20) / 2;
      bool incr = op == 5;
      ZSetEditor ed(ks, 0, "z", e);
      int out = 0;
      double ns = 0;
      ASSERT_TRUE(ed.Add(m, s, incr ? kZAddIncr : 0, &out, &ns));
      ed.Commit();
      auto it = scores.find(m);
      double want = incr && it != scores.end() ? it->second + s : s;
      if (it != scores.end()) model.erase({it->second, m});
      scores[m] = want;
      model.emplace(want, m);
      EXPECT_EQ(ns, want);
    } else if (op < 8 && e != nullptr) {
      std::string m = "m" + std::to_string(rng() % 400);
      ZSetEditor ed(ks, 0, "z", e);
      bool removed = ed.Remove(m);
      ed.Commit();
      auto it = scores.find(m);
      EXPECT_EQ(removed, it != scores.end());
      if (it != scores.end()) {
        model.erase({it->second, m});
        scores.erase(it);
      }
    } else if (e != nullptr) {
      ZSetEditor ed(ks, 0, "z", e);
      std::vector<std::pair<std::string, double>> got;
      bool max = op == 9;
      ed.Pop(max, 1 + rng() % 3, &got);
      ed.Commit();
      for (auto& [m, s] : got) {
        auto want = max ? std::prev(model.end()) : model.begin();
        EXPECT_EQ(want->second, m);
        EXPECT_EQ(want->first, s);
        model.erase(want);
        scores.erase(m);
      }
    }
    e = ks.Find(0, "z", 0);
    if (model.empty()) {
      ASSERT_EQ(e, nullptr);
      continue;
    }
    ASSERT_NE(e, nullptr);
    if (step % 50 != 0) continue;
    ASSERT_EQ(Contents(e), model);
    ZSetReader r(e);
    ASSERT_EQ(r.size(), model.size());
    size_t rank = 0;
    for (const auto& [s, m] : model) {
      size_t got_rank = 0;
      double got_score = 0;
      ASSERT_TRUE(r.Rank(m, &got_rank, &got_score));
      EXPECT_EQ(got_rank, rank);
      EXPECT_EQ(got_score, s);
      ZMember at = r.At(rank);
      EXPECT_EQ(at.member, m);
      rank++;
    }
    for (double x = -12; x <= 12; x += 1.5) {
      size_t below = 0, at_most = 0;
      for (const auto& [s, m] : model) {
        below += s < x ? 1 : 0;
        at_most += s <= x ? 1 : 0;
      }
      EXPECT_EQ(r.CountWhile([&](std::string_view, double s) { return s < x; }), below);
      EXPECT_EQ(r.CountWhile([&](std::string_view, double s) { return s <= x; }), at_most);
    }
    // Reverse walk from the end.
    std::vector<std::string> rev;
    r.Walk(model.size() - 1, true, [&](std::string_view m, double) {
      rev.emplace_back(m);
      return true;
    });
    std::vector<std::string> want_rev;
    for (auto it = model.rbegin(); it != model.rend(); ++it) want_rev.push_back(it->second);
    EXPECT_EQ(rev, want_rev);
    if (e->IsExternal()) {
      size_t before = e->Object()->Bytes();
      EXPECT_GT(before, 0u);
    }
  }
  ks.Delete(0, "z");
  EXPECT_EQ(ks.type_bytes(ValueType::kZSet), 0u);
  EXPECT_EQ(ks.entry_bytes(), 0u);
}

TEST(ZSetRandomTest, SmallFormMatchesModel) { RandomAgainstModel(1000, 1); }
TEST(ZSetRandomTest, BigFormMatchesModel) { RandomAgainstModel(0, 2); }
TEST(ZSetRandomTest, ConvertingSetMatchesModel) { RandomAgainstModel(64, 3); }

TEST(ZSetAccountingTest, BytesFollowTheObject) {
  LimitsGuard guard;
  GlobalEncodingLimits().zset_max_listpack_entries = 0;
  Keyspace ks(1);
  for (int i = 0; i < 5000; i++) Add(ks, "z", "member-" + std::to_string(i), i);
  Entry* e = ks.Find(0, "z", 0);
  size_t obj = e->Object()->Bytes();
  EXPECT_EQ(ks.type_bytes(ValueType::kZSet), obj + Entry::UsableSize(e));
  // Well under Redis's ~100 bytes of overhead per member (members here are ~11 bytes).
  EXPECT_LT(obj / 5000, 70u);
  for (int i = 0; i < 5000; i += 2) {
    ZSetEditor ed(ks, 0, "z", ks.Find(0, "z", 0));
    ed.Remove("member-" + std::to_string(i));
    ed.Commit();
  }
  e = ks.Find(0, "z", 0);
  EXPECT_EQ(ks.type_bytes(ValueType::kZSet), e->Object()->Bytes() + Entry::UsableSize(e));
  ks.Delete(0, "z");
  EXPECT_EQ(ks.type_bytes(ValueType::kZSet), 0u);
  EXPECT_EQ(ks.entry_bytes(), 0u);
}

TEST(ZSetAccountingTest, ReleaseSomeFreesInSlices) {
  SlabHeap heap;
  auto obj = std::make_unique<ZSetObject>(heap);
  for (int i = 0; i < 10000; i++) obj->Set("m" + std::to_string(i), i);
  size_t start = obj->Bytes();
  size_t left = obj->ReleaseSome(1000);
  EXPECT_GT(left, 0u);
  EXPECT_LT(left, 10000u);
  EXPECT_LT(obj->Bytes(), start);
  int rounds = 1;
  while (left > 0) {
    left = obj->ReleaseSome(1000);
    ASSERT_LT(++rounds, 100);
  }
  EXPECT_EQ(obj->Length(), 0u);
  obj.reset();
  EXPECT_EQ(heap.slot_bytes(), 0u);
}

}  // namespace
}  // namespace strata
