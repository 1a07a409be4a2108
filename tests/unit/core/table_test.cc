#include "core/table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <unordered_map>

#include "core/hash.h"
#include "core/slab.h"

namespace strata {
namespace {

class TableTest : public ::testing::Test {
 protected:
  Entry* Make(const std::string& key, const std::string& value = "") {
    size_t usable = 0;
    return Entry::Create(heap_, key, value.empty() ? "v:" + key : value, ValueType::kString,
                         Entry::kNoExpire, &usable);
  }
  void Insert(Table& t, const std::string& k) { t.Insert(Make(k), TableHash(k)); }
  void EraseKey(Table& t, const std::string& k) {
    Table::Ref r = t.Locate(k, TableHash(k));
    ASSERT_TRUE(r) << k;
    Entry::Destroy(heap_, t.Erase(r));
  }
  SlabHeap heap_;
};

TEST_F(TableTest, InsertFindDeleteAcrossSplits) {
  Table t(heap_);
  constexpr int kKeys = 50000;
  for (int i = 0; i < kKeys; i++) Insert(t, "key:" + std::to_string(i));
  EXPECT_EQ(t.size(), static_cast<size_t>(kKeys));
  EXPECT_GT(t.segments(), 4u);
  for (int i = 0; i < kKeys; i++) {
    std::string k = "key:" + std::to_string(i);
    Entry* e = t.Find(k, TableHash(k));
    ASSERT_NE(e, nullptr) << k;
    EXPECT_EQ(e->ValueString(), "v:" + k);
  }
  EXPECT_EQ(t.Find("absent", TableHash("absent")), nullptr);
  for (int i = 0; i < kKeys; i += 2) EraseKey(t, "key:" + std::to_string(i));
  EXPECT_EQ(t.size(), static_cast<size_t>(kKeys / 2));
  EXPECT_EQ(t.Find("key:0", TableHash("key:0")), nullptr);
  EXPECT_NE(t.Find("key:1", TableHash("key:1")), nullptr);
}

// Random inserts, replaces and deletes checked against a reference map.
TEST_F(TableTest, RandomOperationsMatchReference) {
  Table t(heap_);
  std::unordered_map<std::string, std::string> ref;
  std::mt19937_64 rng(7);
  for (int op = 0; op < 200000; op++) {
    std::string k = "k" + std::to_string(rng() % 30000);
    uint64_t h = TableHash(k);
    Table::Ref r = t.Locate(k, h);
    ASSERT_EQ(static_cast<bool>(r), ref.count(k) == 1) << k;
    int what = static_cast<int>(rng() % 3);
    if (what == 0 && r) {
      Entry::Destroy(heap_, t.Erase(r));
      ref.erase(k);
    } else if (r) {
      std::string v = "v" + std::to_string(op);
      Entry::Destroy(heap_, t.Replace(r, Make(k, v)));
      ref[k] = v;
    } else {
      std::string v = "v" + std::to_string(op);
      t.Insert(Make(k, v), h);
      ref[k] = v;
    }
  }
  ASSERT_EQ(t.size(), ref.size());
  for (auto& [k, v] : ref) {
    Entry* e = t.Find(k, TableHash(k));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->ValueString(), v);
  }
  size_t visited = 0;
  t.ForEach([&](Entry* e) {
    visited++;
    EXPECT_EQ(ref.count(std::string(e->Key())), 1u);
  });
  EXPECT_EQ(visited, ref.size());
}

// The lookahead on an empty table, on absent keys, on keys whose tag another key shares,
// and across splits: it reads only the table's own memory (the sanitizer builds check
// that), and every key is still found after it.
TEST_F(TableTest, LookaheadStepsChangeNothing) {
  Table t(heap_);
  auto steps = [&](uint64_t h) {
    t.Prefetch(h);
    uint64_t batch[Table::kLookaheadMax + 3];
    for (size_t i = 0; i < std::size(batch); i++) batch[i] = h + i * 0x9e3779b97f4a7c15ULL;
    t.PrefetchLookups(batch, std::size(batch));
    t.PrefetchLookups(batch, 1);
    t.PrefetchLookups(batch, 0);
  };
  for (uint64_t h : {uint64_t{0}, ~uint64_t{0}, uint64_t{1} << 63}) steps(h);
  constexpr int kKeys = 20000;
  for (int i = 0; i < kKeys; i++) {
    std::string k = "key:" + std::to_string(i);
    steps(TableHash(k));
    Insert(t, k);
    steps(TableHash(k));
    steps(TableHash("absent:" + std::to_string(i)));
  }
  for (uint64_t h = 0; h < 4096; h++) steps(h << 48 | h);  // every tag near home 0
  ASSERT_EQ(t.size(), static_cast<size_t>(kKeys));
  for (int i = 0; i < kKeys; i++) {
    std::string k = "key:" + std::to_string(i);
    Entry* e = t.Find(k, TableHash(k));
    ASSERT_NE(e, nullptr) << k;
    EXPECT_EQ(e->Key(), k);
  }
}

TEST_F(TableTest, ReplaceKeepsPosition) {
  Table t(heap_);
  for (int i = 0; i < 1000; i++) Insert(t, std::to_string(i));
  Table::Ref r = t.Locate("500", TableHash("500"));
  size_t usable = 0;
  Entry* fresh = Entry::Create(heap_, "500", "new", ValueType::kString, 123, &usable);
  Entry::Destroy(heap_, t.Replace(r, fresh));
  EXPECT_EQ(t.Find("500", TableHash("500"))->ValueString(), "new");
  EXPECT_EQ(t.Find("500", TableHash("500"))->ExpireMs(), 123);
  for (int i = 0; i < 1000; i++) {
    std::string k = std::to_string(i);
    EXPECT_NE(t.Find(k, TableHash(k)), nullptr);
  }
}

TEST_F(TableTest, ScanVisitsEverythingOnce) {
  Table t(heap_);
  for (int i = 0; i < 20000; i++) Insert(t, "k" + std::to_string(i));
  std::multiset<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = t.ScanChunk(cursor, [&](Entry* e) {
      seen.insert(std::string(e->Key()));
      return false;
    });
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), 20000u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 20000u);
}

TEST_F(TableTest, ScanSurvivesGrowthAndDeletes) {
  Table t(heap_);
  std::set<std::string> original;
  for (int i = 0; i < 3000; i++) {
    std::string k = "orig" + std::to_string(i);
    original.insert(k);
    Insert(t, k);
  }
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int extra = 0;
  do {
    cursor = t.ScanChunk(cursor, [&](Entry* e) {
      seen.insert(std::string(e->Key()));
      return false;
    });
    // Grow the table a lot, and delete other keys, while the scan is in progress.
    for (int j = 0; j < 50 && extra < 30000; j++) {
      Insert(t, "extra" + std::to_string(extra));
      if (extra % 3 == 0 && extra > 0) EraseKey(t, "extra" + std::to_string(extra - 1));
      extra++;
    }
  } while (cursor != 0);
  for (const std::string& k : original) EXPECT_TRUE(seen.count(k)) << k;
}

TEST_F(TableTest, ScanDeletesInPlace) {
  Table t(heap_);
  for (int i = 0; i < 5000; i++) Insert(t, std::to_string(i));
  uint64_t cursor = 0;
  size_t n = 0;
  do {
    cursor = t.ScanChunk(cursor, [&](Entry* e) {
      Entry::Destroy(heap_, e);
      n++;
      return true;
    });
  } while (cursor != 0);
  EXPECT_EQ(n, 5000u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(heap_.slot_bytes(), 0u);
}

TEST_F(TableTest, RandomEntryAndClear) {
  Table t(heap_);
  EXPECT_EQ(t.RandomEntry(42), nullptr);
  for (int i = 0; i < 100; i++) Insert(t, std::to_string(i));
  std::set<std::string> picked;
  for (uint64_t s = 0; s < 2000; s++) {
    picked.insert(std::string(t.RandomEntry(s * 0x9E3779B97F4A7C15ull)->Key()));
  }
  EXPECT_GT(picked.size(), 50u);
  EXPECT_GT(t.Clear(), 0u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.RandomEntry(1), nullptr);
  EXPECT_EQ(heap_.slot_bytes(), 0u);
}

// The table's own bytes per key stay near 8 / load factor at any size.
TEST_F(TableTest, OverheadPerKeyIsBounded) {
  Table t(heap_);
  for (int i = 1; i <= 300000; i++) {
    Insert(t, "memtier-" + std::to_string(i));
    if (i % 25000 == 0) {
      double per_key = static_cast<double>(t.OverheadBytes()) / i;
      EXPECT_LT(per_key, 13.0) << "at " << i << " keys";
    }
  }
  // Every segment's share adds up to its bytes.
  Table::Ref r = t.Locate("memtier-77", TableHash("memtier-77"));
  ASSERT_TRUE(r);
  EXPECT_GT(Table::ShareBytes(r), 8u);
  EXPECT_LT(Table::ShareBytes(r), 16u);
}

// Loading inserts keys sorted by hash; Reserve sizes the segments first so they land
// near their homes, with the usual overhead per key.
TEST_F(TableTest, ReserveThenInsertInHashOrder) {
  constexpr int kN = 200000;
  std::vector<std::pair<uint64_t, std::string>> keys;
  for (int i = 0; i < kN; i++) {
    std::string k = "key:" + std::to_string(i);
    keys.emplace_back(TableHash(k), k);
  }
  std::sort(keys.begin(), keys.end());
  Table t(heap_);
  t.Reserve(kN);
  EXPECT_GT(t.segments(), 32u);
  for (auto& [h, k] : keys) t.Insert(Make(k), h);
  EXPECT_EQ(t.size(), static_cast<size_t>(kN));
  for (int i = 0; i < kN; i += 97) {
    std::string k = "key:" + std::to_string(i);
    ASSERT_NE(t.Find(k, TableHash(k)), nullptr) << k;
  }
  EXPECT_LT(static_cast<double>(t.OverheadBytes()) / kN, 16.0);
  Table small(heap_);
  small.Reserve(10);  // fits the first segment: nothing changes
  EXPECT_EQ(small.segments(), 1u);
}

}  // namespace
}  // namespace strata
