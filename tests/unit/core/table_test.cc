#include "core/table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/hash.h"

namespace strata {
namespace {

Entry* Make(const std::string& key) {
  size_t usable = 0;
  return Entry::Create(key, "v:" + key, ValueType::kString, Entry::kNoExpire, &usable);
}

TEST(TableTest, InsertFindDeleteAcrossSplits) {
  Table t;
  constexpr int kKeys = 50000;
  for (int i = 0; i < kKeys; i++) {
    std::string k = "key:" + std::to_string(i);
    t.Insert(Make(k), TableHash(k));
  }
  EXPECT_EQ(t.size(), static_cast<size_t>(kKeys));
  for (int i = 0; i < kKeys; i++) {
    std::string k = "key:" + std::to_string(i);
    Entry* e = t.Find(k, TableHash(k));
    ASSERT_NE(e, nullptr) << k;
    EXPECT_EQ(e->Value(), "v:" + k);
  }
  EXPECT_EQ(t.Find("absent", TableHash("absent")), nullptr);
  for (int i = 0; i < kKeys; i += 2) {
    std::string k = "key:" + std::to_string(i);
    Entry** link = t.FindLink(k, TableHash(k));
    ASSERT_NE(link, nullptr);
    Entry::Destroy(t.UnlinkAt(link));
  }
  EXPECT_EQ(t.size(), static_cast<size_t>(kKeys / 2));
  EXPECT_EQ(t.Find("key:0", TableHash("key:0")), nullptr);
  EXPECT_NE(t.Find("key:1", TableHash("key:1")), nullptr);
}

TEST(TableTest, ReplaceKeepsChain) {
  Table t;
  for (int i = 0; i < 1000; i++) {
    std::string k = std::to_string(i);
    t.Insert(Make(k), TableHash(k));
  }
  Entry** link = t.FindLink("500", TableHash("500"));
  size_t usable = 0;
  Entry* fresh = Entry::Create("500", "new", ValueType::kString, 123, &usable);
  Entry::Destroy(t.ReplaceAt(link, fresh));
  EXPECT_EQ(t.Find("500", TableHash("500"))->Value(), "new");
  EXPECT_EQ(t.Find("500", TableHash("500"))->ExpireMs(), 123);
  for (int i = 0; i < 1000; i++) {
    std::string k = std::to_string(i);
    EXPECT_NE(t.Find(k, TableHash(k)), nullptr);
  }
}

TEST(TableTest, ScanVisitsEverythingOnce) {
  Table t;
  for (int i = 0; i < 20000; i++) {
    std::string k = "k" + std::to_string(i);
    t.Insert(Make(k), TableHash(k));
  }
  std::multiset<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = t.ScanBucket(cursor, [&](Entry** link) {
      seen.insert(std::string((*link)->Key()));
      return false;
    });
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), 20000u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 20000u);
}

TEST(TableTest, ScanSurvivesGrowth) {
  Table t;
  std::set<std::string> original;
  for (int i = 0; i < 3000; i++) {
    std::string k = "orig" + std::to_string(i);
    original.insert(k);
    t.Insert(Make(k), TableHash(k));
  }
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int extra = 0;
  do {
    cursor = t.ScanBucket(cursor, [&](Entry** link) {
      seen.insert(std::string((*link)->Key()));
      return false;
    });
    // Grow the table a lot while the scan is in progress.
    for (int j = 0; j < 50 && extra < 30000; j++) {
      std::string k = "extra" + std::to_string(extra++);
      t.Insert(Make(k), TableHash(k));
    }
  } while (cursor != 0);
  for (const std::string& k : original) EXPECT_TRUE(seen.count(k)) << k;
}

TEST(TableTest, ScanDeletesInPlace) {
  Table t;
  for (int i = 0; i < 5000; i++) {
    std::string k = std::to_string(i);
    t.Insert(Make(k), TableHash(k));
  }
  uint64_t cursor = 0;
  do {
    cursor = t.ScanBucket(cursor, [&](Entry** link) {
      Entry::Destroy(t.UnlinkAt(link));
      return true;
    });
  } while (cursor != 0);
  EXPECT_EQ(t.size(), 0u);
}

TEST(TableTest, RandomEntryAndClear) {
  Table t;
  EXPECT_EQ(t.RandomEntry(42), nullptr);
  for (int i = 0; i < 100; i++) {
    std::string k = std::to_string(i);
    t.Insert(Make(k), TableHash(k));
  }
  std::set<std::string> picked;
  for (uint64_t s = 0; s < 2000; s++) {
    picked.insert(std::string(t.RandomEntry(s * 0x9E3779B97F4A7C15ull)->Key()));
  }
  EXPECT_GT(picked.size(), 50u);
  EXPECT_GT(t.Clear(), 0u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.RandomEntry(1), nullptr);
}

}  // namespace
}  // namespace strata
