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

  // Records seq from+1 .. to, holding Value(i).
  static std::vector<ColdWrite> Puts(int from, int to) {
    std::vector<ColdWrite> batch;
    for (int i = from; i < to; i++) {
      ColdWrite w;
      w.seq = static_cast<uint64_t>(i) + 1;
      w.value = Value(i);
      batch.push_back(std::move(w));
    }
    return batch;
  }

  std::string dir_;
};

TEST_F(ColdStoreTest, KeysSortBySequenceNumber) {
  EXPECT_EQ(ColdKey(1), std::string("\0\0\0\0\0\0\0\1", 8));
  EXPECT_EQ(ColdKey(0x0102), std::string("\0\0\0\0\0\0\1\2", 8));
  EXPECT_LT(ColdKey(255), ColdKey(256));
  EXPECT_LT(ColdKey(UINT32_MAX), ColdKey(uint64_t{UINT32_MAX} + 1));
}

TEST_F(ColdStoreTest, WritesReadBackByteExact) {
  ColdCache cache(8 << 20);
  auto store = OpenStore(&cache);
  EXPECT_EQ(store->MaxSeq(), 0u);
  ASSERT_TRUE(store->Write(Puts(0, 2000)).ok());
  std::vector<ColdWrite> bin(1);
  bin[0].seq = 5000;
  bin[0].value = std::string("\0bin\xff", 5);
  ASSERT_TRUE(store->Write(bin).ok());
  std::vector<std::optional<std::string>> got;
  ASSERT_TRUE(store->MultiGet({8, 4999, 5000, 2000}, &got).ok());
  ASSERT_EQ(got.size(), 4u);
  ASSERT_TRUE(got[0].has_value());
  EXPECT_EQ(*got[0], Value(7));
  EXPECT_FALSE(got[1].has_value());
  ASSERT_TRUE(got[2].has_value());
  EXPECT_EQ(*got[2], std::string("\0bin\xff", 5));
  EXPECT_EQ(*got[3], Value(1999));
  EXPECT_EQ(store->MaxSeq(), 5000u);
}

TEST_F(ColdStoreTest, Erases) {
  ColdCache cache(8 << 20);
  auto store = OpenStore(&cache);
  ASSERT_TRUE(store->Write(Puts(0, 100)).ok());
  std::vector<ColdWrite> batch(2);
  batch[0].seq = 5;
  batch[0].erase = true;
  batch[1].seq = 200;
  batch[1].value = "new";
  ASSERT_TRUE(store->Write(batch).ok());
  std::vector<std::optional<std::string>> got;
  ASSERT_TRUE(store->MultiGet({5, 6, 200}, &got).ok());
  EXPECT_FALSE(got[0].has_value());
  EXPECT_EQ(*got[1], Value(5));
  EXPECT_EQ(*got[2], "new");
}

TEST_F(ColdStoreTest, CacheProbeNeverDoesIo) {
  ColdCache cache(8 << 20);
  {
    auto store = OpenStore(&cache);
    ASSERT_TRUE(store->Write(Puts(0, 3000)).ok());
    std::string v;
    // Still in the memtable: found without I/O.
    EXPECT_EQ(store->TryGetCached(2, &v), ColdStore::Probe::kFound);
    EXPECT_EQ(v, Value(1));
    EXPECT_EQ(store->TryGetCached(99999, &v), ColdStore::Probe::kAbsent);
    ASSERT_TRUE(store->CompactAll().ok());
  }
  ColdCache fresh(8 << 20);
  auto store = OpenStore(&fresh);
  std::string v;
  // Reopened with an empty cache: the block must come from disk.
  EXPECT_EQ(store->TryGetCached(11, &v), ColdStore::Probe::kNeedsIo);
  std::vector<std::optional<std::string>> got;
  ASSERT_TRUE(store->MultiGet({11}, &got).ok());
  ASSERT_TRUE(got[0].has_value());
  // Now its block is cached.
  EXPECT_EQ(store->TryGetCached(11, &v), ColdStore::Probe::kFound);
  EXPECT_EQ(v, Value(10));
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
    w.seq = static_cast<uint64_t>(i) + 1;
    w.erase = true;
    erase.push_back(std::move(w));
  }
  ASSERT_TRUE(store->Write(erase).ok());
  ASSERT_TRUE(store->CompactAll().ok());
  uint64_t after = store->DiskBytes();
  EXPECT_LE(after, before * 6 / 10) << before << " -> " << after;
  EXPECT_GT(store->CompactionBytes(), 0u);
}

TEST_F(ColdStoreTest, CheckpointIsAConsistentCopyThatRestores) {
  ColdCache cache(8 << 20);
  std::string cp = dir_ + "-checkpoint";
  std::string live = dir_ + "-restored";
  {
    auto store = OpenStore(&cache);
    ASSERT_TRUE(store->Write(Puts(0, 500)).ok());  // in the memtable only
    ASSERT_TRUE(store->Checkpoint(cp).ok());
    // Changes after the checkpoint are not in it.
    std::vector<ColdWrite> after(1);
    after[0].seq = 1;
    after[0].erase = true;
    ASSERT_TRUE(store->Write(after).ok());
    ASSERT_TRUE(store->Write(Puts(500, 600)).ok());
  }
  ASSERT_TRUE(ColdStore::RestoreCheckpoint(cp, live).ok());
  ColdStoreOptions o;
  o.dir = live;
  std::unique_ptr<ColdStore> restored;
  ASSERT_TRUE(ColdStore::Open(o, &cache, &restored).ok());
  std::vector<std::optional<std::string>> got;
  ASSERT_TRUE(restored->MultiGet({1, 500, 501}, &got).ok());
  ASSERT_TRUE(got[0].has_value());
  EXPECT_EQ(*got[0], Value(0));
  EXPECT_EQ(*got[1], Value(499));
  EXPECT_FALSE(got[2].has_value());
  EXPECT_EQ(restored->MaxSeq(), 500u);
  // Writing to the restored store leaves the checkpoint as it was.
  std::vector<ColdWrite> erase(1);
  erase[0].seq = 500;
  erase[0].erase = true;
  ASSERT_TRUE(restored->Write(erase).ok());
  ASSERT_TRUE(restored->CompactAll().ok());
  restored.reset();
  ASSERT_TRUE(ColdStore::RestoreCheckpoint(cp, live).ok());
  ASSERT_TRUE(ColdStore::Open(o, &cache, &restored).ok());
  ASSERT_TRUE(restored->MultiGet({500}, &got).ok());
  EXPECT_TRUE(got[0].has_value());
  restored.reset();
  EXPECT_FALSE(ColdStore::RestoreCheckpoint(dir_ + "-none", live).ok());
  std::filesystem::remove_all(cp);
  std::filesystem::remove_all(live);
}

TEST_F(ColdStoreTest, MemoryStaysWithinTheCache) {
  ColdCache cache(4 << 20);
  auto store = OpenStore(&cache);
  for (int i = 0; i < 40000; i += 2000) ASSERT_TRUE(store->Write(Puts(i, i + 2000)).ok());
  std::vector<uint64_t> keys;
  for (int i = 0; i < 40000; i += 7) keys.push_back(static_cast<uint64_t>(i) + 1);
  std::vector<std::optional<std::string>> got;
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

// Several stores sharing one small cache: their memtables stay within half of it, so
// the cache (counted in used_memory) does not outgrow its capacity with writes, and a
// flush gives their memory back.
TEST_F(ColdStoreTest, SharedCacheHoldsTheMemtablesOfEveryStore) {
  constexpr size_t kStores = 4;
  constexpr size_t kCapacity = 1 << 20;
  ColdCache cache(kCapacity);
  std::vector<std::unique_ptr<ColdStore>> stores;
  for (size_t i = 0; i < kStores; i++) {
    ColdStoreOptions o;
    o.dir = dir_ + "-" + std::to_string(i);
    o.stores_sharing_cache = kStores;
    std::unique_ptr<ColdStore> s;
    Status st = ColdStore::Open(o, &cache, &s);
    ASSERT_TRUE(st.ok()) << st.ToString();
    stores.push_back(std::move(s));
  }
  // Each store takes about its share of the memtable budget, in small batches.
  for (int b = 0; b < 60; b++) {
    for (auto& s : stores) ASSERT_TRUE(s->Write(Puts(b * 2, b * 2 + 2)).ok());
  }
  uint64_t memtables = 0;
  for (auto& s : stores) memtables += s->MemtableBytes();
  EXPECT_LE(memtables, kCapacity / 2 + kStores * (64 << 10));
  EXPECT_LE(cache.UsageBytes(), kCapacity);
  for (auto& s : stores) ASSERT_TRUE(s->FlushMemtables().ok());
  memtables = 0;
  for (auto& s : stores) memtables += s->MemtableBytes();
  EXPECT_LT(memtables, kStores * (64 << 10));
  for (auto& s : stores) {
    std::vector<std::optional<std::string>> got;
    ASSERT_TRUE(s->MultiGet({7}, &got).ok());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], Value(6));
  }
  stores.clear();
  for (size_t i = 0; i < kStores; i++) std::filesystem::remove_all(dir_ + "-" + std::to_string(i));
}

std::vector<ColdWrite> Erases(int from, int to, int step) {
  std::vector<ColdWrite> batch;
  for (int i = from; i < to; i += step) {
    ColdWrite w;
    w.seq = static_cast<uint64_t>(i) + 1;
    w.erase = true;
    batch.push_back(std::move(w));
  }
  return batch;
}

// A freed record is dead at once for reads, and a flush drops it without writing it.
TEST_F(ColdStoreTest, DeadRecordsReadAsAbsentAndAreDroppedByAFlush) {
  ColdCache cache(8 << 20);
  auto store = OpenStore(&cache);
  ASSERT_TRUE(store->Write(Puts(0, 100)).ok());  // in the memtable
  ASSERT_TRUE(store->Write(Erases(0, 100, 2)).ok());
  EXPECT_EQ(store->DeadRecords(), 50u);
  std::string v;
  EXPECT_EQ(store->TryGetCached(1, &v), ColdStore::Probe::kAbsent);
  EXPECT_EQ(store->TryGetCached(2, &v), ColdStore::Probe::kFound);
  ASSERT_TRUE(store->FlushMemtables().ok());
  EXPECT_EQ(store->DroppedRecords(), 50u);
  EXPECT_EQ(store->DeadRecords(), 0u);
  std::vector<std::optional<std::string>> got;
  ASSERT_TRUE(store->MultiGet({1, 2}, &got).ok());
  EXPECT_FALSE(got[0].has_value());
  EXPECT_EQ(got[1], Value(1));
}

// Records arrive in key order and nothing is deleted in place: loading a store writes
// its data once (flushes), not again and again (compactions). Once enough of the files
// is dead, GC gets them rewritten and disk space follows live data.
TEST_F(ColdStoreTest, AppendsAreNotRewrittenAndGcReclaimsDeadFiles) {
  ColdCache cache(4 << 20);
  auto store = OpenStore(&cache, "none");
  constexpr int kRecords = 40000;
  for (int i = 0; i < kRecords; i += 500) ASSERT_TRUE(store->Write(Puts(i, i + 500)).ok());
  ASSERT_TRUE(store->FlushMemtables().ok());
  uint64_t written = uint64_t{kRecords} * 1000;
  EXPECT_LT(store->CompactionBytes(), written / 10) << "rewrote what was appended";
  uint64_t before = store->DiskBytes();
  EXPECT_GT(before, written);
  size_t rewritten = 0;
  ASSERT_TRUE(store->CollectGarbage(0.4, &rewritten).ok());
  EXPECT_EQ(rewritten, 0u);  // nothing dead yet
  ASSERT_TRUE(store->Write(Erases(0, kRecords, 2)).ok());
  ASSERT_TRUE(store->CollectGarbage(0.4, &rewritten).ok());
  EXPECT_GT(rewritten, 0u);
  uint64_t after = store->DiskBytes();
  EXPECT_LE(after, before * 6 / 10) << before << " -> " << after;
  EXPECT_EQ(store->DroppedRecords(), uint64_t{kRecords} / 2);
  EXPECT_EQ(store->DeadRecords(), 0u);
  std::vector<std::optional<std::string>> got;
  ASSERT_TRUE(store->MultiGet({1, 2, kRecords - 1, kRecords}, &got).ok());
  EXPECT_FALSE(got[0].has_value());
  EXPECT_EQ(got[1], Value(1));
  EXPECT_FALSE(got[2].has_value());
  EXPECT_EQ(got[3], Value(kRecords - 1));
}

// Flushed files reach the bottom level as they are (trivial moves), whatever the
// compression: RocksDB moves a file without rewriting it only into a level of the same
// compression, so every level must have the store's.
TEST_F(ColdStoreTest, AppendedFilesMoveDownWithoutRewritesWhateverTheCompression) {
  for (const char* compression : {"lz4", "zstd"}) {
    SCOPED_TRACE(compression);
    std::filesystem::remove_all(dir_);
    ColdCache cache(4 << 20);
    ColdStoreOptions o;
    o.dir = dir_;
    o.compression = compression;
    o.level_base_bytes = 1 << 20;  // 40 MB over several levels
    std::unique_ptr<ColdStore> store;
    ASSERT_TRUE(ColdStore::Open(o, &cache, &store).ok());
    constexpr int kRecords = 40000;
    for (int i = 0; i < kRecords; i += 500) ASSERT_TRUE(store->Write(Puts(i, i + 500)).ok());
    ASSERT_TRUE(store->FlushMemtables().ok());
    for (int i = 0;
         i < 200 && (store->CompactionsRunning() > 0 || store->PendingCompactionBytes() > 0); i++) {
      usleep(50 * 1000);
    }
    EXPECT_LT(store->CompactionBytes(), uint64_t{kRecords} * 1000 / 10)
        << "rewrote what was appended";
  }
}

// After a restore, records that no entry names are found and made dead, then dropped.
TEST_F(ColdStoreTest, OrphanSweepMakesUnnamedRecordsDead) {
  ColdCache cache(8 << 20);
  auto store = OpenStore(&cache);
  ASSERT_TRUE(store->Write(Puts(0, 100)).ok());
  ASSERT_TRUE(store->FlushMemtables().ok());
  store->BeginOrphanSweep(store->MaxSeq());
  for (uint64_t seq = 2; seq <= 100; seq += 2) store->KeepRecord(seq);
  EXPECT_EQ(store->DeadRecords(), 0u);  // nothing before the end
  EXPECT_EQ(store->EndOrphanSweep(), 50u);
  EXPECT_EQ(store->DeadRecords(), 50u);
  std::string v;
  EXPECT_EQ(store->TryGetCached(3, &v), ColdStore::Probe::kAbsent);
  ASSERT_TRUE(store->CompactAll().ok());
  EXPECT_EQ(store->DroppedRecords(), 50u);
  std::vector<std::optional<std::string>> got;
  ASSERT_TRUE(store->MultiGet({3, 4}, &got).ok());
  EXPECT_FALSE(got[0].has_value());
  EXPECT_EQ(got[1], Value(3));
}

// FLUSHALL's range erase: every record goes, whole files without being read.
TEST_F(ColdStoreTest, RangeEraseRemovesEveryRecord) {
  ColdCache cache(8 << 20);
  auto store = OpenStore(&cache);
  for (int i = 0; i < 4000; i += 1000) ASSERT_TRUE(store->Write(Puts(i, i + 1000)).ok());
  ASSERT_TRUE(store->CompactAll().ok());
  ASSERT_TRUE(store->Write(Erases(0, 10, 1)).ok());  // some dead already
  std::vector<ColdWrite> all(1);
  all[0].seq = 0;
  all[0].erase = true;
  all[0].erase_to = 4001;
  ASSERT_TRUE(store->Write(all).ok());
  EXPECT_EQ(store->DeadRecords(), 0u);  // the range tombstone covers them
  std::vector<std::optional<std::string>> got;
  ASSERT_TRUE(store->MultiGet({1, 500, 4000}, &got).ok());
  for (const auto& g : got) EXPECT_FALSE(g.has_value());
  ASSERT_TRUE(store->CompactAll().ok());
  EXPECT_LT(store->DiskBytes(), 64u << 10);
}

}  // namespace
}  // namespace strata
