#include "storage/cold_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace strata {
namespace {

class ColdStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "strata-cold-" + std::to_string(getpid()) + "-" +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<ColdStore> OpenStore(ColdCache* cache, std::string compression = "lz4") {
    ColdStoreOptions o;
    o.dir = dir_;
    o.compression = std::move(compression);
    std::unique_ptr<ColdStore> s;
    Status st = ColdStore::Open(o, cache, &s);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return s;
  }

  static std::string Value(int i, size_t n = 1000) {
    std::mt19937 rng(static_cast<uint32_t>(i));
    std::string v(n, ' ');
    for (char& c : v) c = static_cast<char>('a' + rng() % 26);
    return v;
  }

  static std::vector<ColdWrite> Puts(int from, int to, uint32_t db = 0) {
    std::vector<ColdWrite> batch;
    for (int i = from; i < to; i++) {
      ColdWrite w;
      w.db = db;
      w.key = "key:" + std::to_string(i);
      w.seq = static_cast<uint64_t>(i) + 1;
      w.value = Value(i);
      batch.push_back(std::move(w));
    }
    return batch;
  }

  std::string dir_;
};

TEST_F(ColdStoreTest, KeysSortByDatabaseThenKey) {
  EXPECT_EQ(ColdKey(0, "a"), std::string("\0\0\0\0a", 5));
  EXPECT_EQ(ColdKey(258, ""), std::string("\0\0\1\2", 4));
  EXPECT_LT(ColdKey(1, "zzz"), ColdKey(2, "a"));
}

TEST_F(ColdStoreTest, WritesReadBackByteExact) {
  ColdCache cache(8 << 20);
  auto store = OpenStore(&cache);
  ASSERT_TRUE(store->Write(Puts(0, 2000)).ok());
  std::vector<ColdWrite> other = Puts(0, 10, /*db=*/3);
  other[0].value = std::string("\0bin\xff", 5);
  ASSERT_TRUE(store->Write(other).ok());
  std::vector<std::pair<uint32_t, std::string>> keys = {
      {0, "key:7"}, {0, "missing"}, {3, "key:0"}, {1, "key:7"}, {0, "key:1999"}};
  std::vector<std::optional<ColdValue>> got;
  ASSERT_TRUE(store->MultiGet(keys, &got).ok());
  ASSERT_EQ(got.size(), 5u);
  ASSERT_TRUE(got[0].has_value());
  EXPECT_EQ(got[0]->seq, 8u);
  EXPECT_EQ(got[0]->value, Value(7));
  EXPECT_FALSE(got[1].has_value());
  ASSERT_TRUE(got[2].has_value());
  EXPECT_EQ(got[2]->value, std::string("\0bin\xff", 5));
  EXPECT_FALSE(got[3].has_value());  // databases are apart
  EXPECT_EQ(got[4]->value, Value(1999));
}

TEST_F(ColdStoreTest, ErasesAndOverwrites) {
  ColdCache cache(8 << 20);
  auto store = OpenStore(&cache);
  ASSERT_TRUE(store->Write(Puts(0, 100)).ok());
  std::vector<ColdWrite> batch(2);
  batch[0].key = "key:5";
  batch[0].erase = true;
  batch[1].key = "key:6";
  batch[1].seq = 99;
  batch[1].value = "new";
  ASSERT_TRUE(store->Write(batch).ok());
  std::vector<std::optional<ColdValue>> got;
  ASSERT_TRUE(store->MultiGet({{0, "key:5"}, {0, "key:6"}}, &got).ok());
  EXPECT_FALSE(got[0].has_value());
  ASSERT_TRUE(got[1].has_value());
  EXPECT_EQ(got[1]->seq, 99u);
  EXPECT_EQ(got[1]->value, "new");
}

TEST_F(ColdStoreTest, CacheProbeNeverDoesIo) {
  ColdCache cache(8 << 20);
  {
    auto store = OpenStore(&cache);
    ASSERT_TRUE(store->Write(Puts(0, 3000)).ok());
    ColdValue v;
    // Still in the memtable: found without I/O.
    EXPECT_EQ(store->TryGetCached(0, "key:1", &v), ColdStore::Probe::kFound);
    EXPECT_EQ(v.value, Value(1));
    ASSERT_TRUE(store->CompactAll().ok());
  }
  ColdCache fresh(8 << 20);
  auto store = OpenStore(&fresh);
  ColdValue v;
  // Reopened with an empty cache: the block must come from disk.
  EXPECT_EQ(store->TryGetCached(0, "key:10", &v), ColdStore::Probe::kNeedsIo);
  std::vector<std::optional<ColdValue>> got;
  ASSERT_TRUE(store->MultiGet({{0, "key:10"}}, &got).ok());
  ASSERT_TRUE(got[0].has_value());
  // Now its block is cached.
  EXPECT_EQ(store->TryGetCached(0, "key:10", &v), ColdStore::Probe::kFound);
  EXPECT_EQ(v.value, Value(10));
}

TEST_F(ColdStoreTest, DiskFollowsLiveDataAfterCompaction) {
  ColdCache cache(8 << 20);
  auto store = OpenStore(&cache, "none");
  for (int i = 0; i < 20000; i += 2000) ASSERT_TRUE(store->Write(Puts(i, i + 2000)).ok());
  ASSERT_TRUE(store->CompactAll().ok());
  uint64_t before = store->DiskBytes();
  EXPECT_GT(before, 20000u * 1000);
  std::vector<ColdWrite> erase;
  for (int i = 0; i < 20000; i += 2) {
    ColdWrite w;
    w.key = "key:" + std::to_string(i);
    w.erase = true;
    erase.push_back(std::move(w));
  }
  ASSERT_TRUE(store->Write(erase).ok());
  ASSERT_TRUE(store->CompactAll().ok());
  uint64_t after = store->DiskBytes();
  EXPECT_LE(after, before * 6 / 10) << before << " -> " << after;
}

TEST_F(ColdStoreTest, MemoryStaysWithinTheCache) {
  ColdCache cache(4 << 20);
  auto store = OpenStore(&cache);
  for (int i = 0; i < 40000; i += 2000) ASSERT_TRUE(store->Write(Puts(i, i + 2000)).ok());
  std::vector<std::pair<uint32_t, std::string>> keys;
  for (int i = 0; i < 40000; i += 7) keys.emplace_back(0, "key:" + std::to_string(i));
  std::vector<std::optional<ColdValue>> got;
  ASSERT_TRUE(store->MultiGet(keys, &got).ok());
  for (const auto& g : got) ASSERT_TRUE(g.has_value());
  // 40 MB written and read back through a 4 MB budget.
  EXPECT_LE(cache.UsageBytes(), cache.capacity_bytes() + (1 << 20));
  EXPECT_LT(store->TableReaderBytes(), 1u << 20);
}

TEST_F(ColdStoreTest, ADirectoryThatCannotBeUsedIsAClearError) {
  std::filesystem::create_directories(std::filesystem::path(dir_).parent_path());
  std::string file = dir_ + ".file";
  std::ofstream(file) << "not a directory";
  ColdCache cache(1 << 20);
  ColdStoreOptions o;
  o.dir = file + "/store";
  std::unique_ptr<ColdStore> s;
  Status st = ColdStore::Open(o, &cache, &s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(o.dir), std::string::npos) << st.ToString();
  EXPECT_EQ(s, nullptr);
  o.dir = dir_;
  o.compression = "snappy-ish";
  EXPECT_EQ(ColdStore::Open(o, &cache, &s).code(), Status::Code::kInvalidArgument);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace strata
