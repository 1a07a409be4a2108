#include "core/zset_index.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/slab.h"

namespace strata {
namespace {

using Ref = std::pair<double, std::string>;

// Entries for members (the index only points at them), and the model of the order.
class IndexFixture {
 public:
  ~IndexFixture() {
    index.Clear();
    for (auto& [m, e] : entries_) Entry::Destroy(heap_, e);
  }
  Entry* EntryFor(const std::string& m) {
    auto it = entries_.find(m);
    if (it != entries_.end()) return it->second;
    size_t usable = 0;
    Entry* e = Entry::Create(heap_, m, "", ValueType::kString, Entry::kNoExpire, &usable);
    entries_.emplace(m, e);
    return e;
  }
  void Insert(double s, const std::string& m) {
    index.Insert(s, EntryFor(m));
    model.emplace(s, m);
  }
  bool Erase(double s, const std::string& m) {
    bool a = index.Erase(s, EntryFor(m));
    bool b = model.erase({s, m}) > 0;
    EXPECT_EQ(a, b);
    return a;
  }
  void CheckAll() {
    ASSERT_TRUE(index.Valid());
    ASSERT_EQ(index.size(), model.size());
    size_t r = 0;
    ScoreIndex::Pos p = index.First();
    for (const Ref& ref : model) {
      ASSERT_TRUE(p);
      EXPECT_EQ(p.item().score, ref.first);
      EXPECT_EQ(p.item().member(), ref.second);
      EXPECT_EQ(index.Rank(ref.first, EntryFor(ref.second)), r);
      r++;
      ScoreIndex::Next(&p);
    }
    EXPECT_FALSE(p);
    // Backwards from the end.
    p = index.Last();
    for (auto it = model.rbegin(); it != model.rend(); ++it) {
      ASSERT_TRUE(p);
      EXPECT_EQ(p.item().member(), it->second);
      ScoreIndex::Prev(&p);
    }
    EXPECT_FALSE(p);
  }

  ScoreIndex index;
  std::set<Ref> model;

 private:
  SlabHeap heap_;
  std::unordered_map<std::string, Entry*> entries_;
};

TEST(ScoreIndexTest, EmptyIndex) {
  ScoreIndex idx;
  EXPECT_EQ(idx.size(), 0u);
  EXPECT_TRUE(idx.Valid());
  EXPECT_FALSE(idx.First());
  EXPECT_FALSE(idx.Last());
  EXPECT_EQ(idx.CountWhile([](const ScoreIndex::Item&) { return true; }), 0u);
  EXPECT_EQ(idx.Bytes(), 0u);
}

TEST(ScoreIndexTest, OrdersByScoreThenMemberBytes) {
  IndexFixture f;
  f.Insert(2, "a");
  f.Insert(1, "b");
  f.Insert(1, "a");
  f.Insert(1, "ab");
  f.Insert(1, "\xff");
  f.Insert(-std::numeric_limits<double>::infinity(), "z");
  f.Insert(std::numeric_limits<double>::infinity(), "0");
  f.CheckAll();
  EXPECT_EQ(f.index.First().item().member(), "z");
  EXPECT_EQ(f.index.Seek(1).item().member(), "a");
  EXPECT_EQ(f.index.Seek(2).item().member(), "ab");
  EXPECT_EQ(f.index.Seek(4).item().member(), "\xff");
  EXPECT_EQ(f.index.Last().item().member(), "0");
}

TEST(ScoreIndexTest, AscendingAndDescendingBulkLoadsFillLeaves) {
  for (bool ascending : {true, false}) {
    IndexFixture f;
    const int n = 10000;
    for (int i = 0; i < n; i++) {
      int s = ascending ? i : n - i;
      f.Insert(s, "m" + std::to_string(i));
    }
    f.CheckAll();
    // Leaves nearly full: well under 20 bytes of index per member.
    EXPECT_LT(f.index.Bytes(), n * 20u) << ascending;
  }
}

TEST(ScoreIndexTest, RandomInsertsStayCompact) {
  IndexFixture f;
  std::mt19937_64 rng(7);
  const int n = 20000;
  for (int i = 0; i < n; i++) f.Insert(static_cast<double>(rng() % 1000000), std::to_string(i));
  f.CheckAll();
  EXPECT_LT(f.index.Bytes(), n * 24u);
}

TEST(ScoreIndexTest, CountWhileIsALowerBound) {
  IndexFixture f;
  for (int i = 0; i < 1000; i++) f.Insert(i / 10, "m" + std::to_string(i % 10));
  f.CheckAll();
  for (double x : {-1.0, 0.0, 0.5, 5.0, 99.0, 100.0, 1e9}) {
    ScoreIndex::Pos pos;
    size_t n = f.index.CountWhile([&](const ScoreIndex::Item& it) { return it.score < x; }, &pos);
    size_t want = 0;
    for (const Ref& r : f.model) want += r.first < x ? 1 : 0;
    EXPECT_EQ(n, want) << x;
    if (want < f.model.size()) {
      ASSERT_TRUE(pos);
      EXPECT_GE(pos.item().score, x);
    } else {
      EXPECT_FALSE(pos);
    }
  }
}

TEST(ScoreIndexTest, RandomOperationsMatchAModel) {
  IndexFixture f;
  std::mt19937_64 rng(12345);
  std::vector<Ref> present;
  std::unordered_set<std::string> live;
  for (int step = 0; step < 60000; step++) {
    int op = static_cast<int>(rng() % 10);
    // Phases: grow, then shrink, then mixed, so merges and borrows get exercised.
    bool grow = (step / 10000) % 2 == 0;
    if ((grow && op < 7) || (!grow && op < 3) || present.empty()) {
      std::string m = "k" + std::to_string(rng() % 50000);
      if (!live.insert(m).second) continue;
      double s = static_cast<double>(static_cast<int>(rng() % 200) - 100) / 4;
      f.Insert(s, m);
      present.emplace_back(s, m);
    } else {
      size_t i = rng() % present.size();
      ASSERT_TRUE(f.Erase(present[i].first, present[i].second));
      live.erase(present[i].second);
      present[i] = present.back();
      present.pop_back();
    }
    if (step % 5000 == 0) f.CheckAll();
  }
  f.CheckAll();
  // Select agrees with the model at every rank.
  size_t r = 0;
  for (const Ref& ref : f.model) {
    ScoreIndex::Pos p = f.index.Seek(r++);
    EXPECT_EQ(p.item().member(), ref.second);
  }
  // Drain completely.
  while (!present.empty()) {
    ASSERT_TRUE(f.Erase(present.back().first, present.back().second));
    present.pop_back();
    if (present.size() % 997 == 0) {
      ASSERT_TRUE(f.index.Valid());
    }
  }
  EXPECT_EQ(f.index.size(), 0u);
  EXPECT_EQ(f.index.Bytes(), 0u);
  EXPECT_TRUE(f.index.Valid());
}

TEST(ScoreIndexTest, EraseOfAbsentItemChangesNothing) {
  IndexFixture f;
  for (int i = 0; i < 200; i++) f.Insert(i, "m" + std::to_string(i));
  EXPECT_FALSE(f.index.Erase(5, f.EntryFor("m6")));
  EXPECT_FALSE(f.index.Erase(1000, f.EntryFor("zz")));
  f.CheckAll();
}

}  // namespace
}  // namespace strata
