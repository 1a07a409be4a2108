// Cold entries: MakeCold/MakeHot, what lookups see, and the ColdHook calls that free
// disk copies (core/keyspace.h "Cold entries"); the spill picker's choice.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/entry.h"
#include "core/hash_type.h"
#include "core/keyspace.h"
#include "core/object.h"
#include "core/spill_picker.h"

namespace strata {
namespace {

// A disk in a map: what the hook was given back, and what it frees.
class FakeDisk : public ColdHook {
 public:
  void ColdFreed(uint64_t seq) override {
    freed.push_back(seq);
    records.erase(seq);
  }
  bool ReadColdNow(uint64_t seq, std::string* out) override {
    reads++;
    auto it = records.find(seq);
    if (it == records.end()) return false;
    *out = it->second;
    return true;
  }
  // Spills key's value as record seq, as the tier does once the write is done.
  Entry* Spill(Keyspace& ks, uint32_t db, std::string_view key, uint64_t seq) {
    Entry* e = ks.FindMeta(db, key, 0);
    EXPECT_NE(e, nullptr);
    EXPECT_FALSE(e->IsCold());
    std::string v = Keyspace::Serialize(e);
    records[seq] = v;
    return ks.MakeCold(db, e, seq, static_cast<uint32_t>(v.size()));
  }
  std::map<uint64_t, std::string> records;
  std::vector<uint64_t> freed;
  int reads = 0;
};

class ColdEntryTest : public ::testing::Test {
 protected:
  ColdEntryTest() : ks_(4) { ks_.set_cold_hook(&disk_); }
  Keyspace ks_;
  FakeDisk disk_;
};

TEST_F(ColdEntryTest, EntryFlagsAndLocator) {
  std::string big(1000, 'x');
  ks_.SetString(0, "k", big, 5000);
  size_t hot_bytes = ks_.used_bytes();
  Entry* c = disk_.Spill(ks_, 0, "k", 77);
  EXPECT_TRUE(c->IsCold());
  EXPECT_FALSE(c->IsExternal());
  EXPECT_FALSE(c->IsPacked());
  EXPECT_EQ(c->ColdSeq(), 77u);
  EXPECT_EQ(c->ColdDiskLen(), 1000u);
  EXPECT_EQ(c->ValueLen(), 1000u);  // STRLEN needs no disk
  EXPECT_EQ(c->Type(), ValueType::kString);
  EXPECT_EQ(c->ExpireMs(), 5000);
  EXPECT_TRUE(c->HasAccess());
  EXPECT_EQ(c->Key(), "k");
  EXPECT_LT(ks_.used_bytes() + 800, hot_bytes);  // 1000 bytes, ascii7-packed when hot
  EXPECT_EQ(ks_.cold_keys(), 1u);
  EXPECT_EQ(ks_.cold_value_bytes(), 1000u);
  EXPECT_EQ(ks_.expires_count(), 1u);
}

TEST_F(ColdEntryTest, MetaLookupsLeaveTheValueOnDisk) {
  ks_.SetString(0, "k", std::string(200, 'v'), Entry::kNoExpire);
  disk_.Spill(ks_, 0, "k", 1);
  Entry* e = ks_.FindMeta(0, "k", 0);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->IsCold());
  EXPECT_GT(ks_.MemoryUsage(0, "k", 0), 0u);
  EXPECT_EQ(disk_.reads, 0);
  EXPECT_TRUE(ks_.FindMeta(0, "k", 0)->IsCold());
}

TEST_F(ColdEntryTest, AValueLookupReadsItBackThroughTheHook) {
  std::string v = "a value that is long enough to be packed as ascii";
  ks_.SetString(1, "k", v, Entry::kNoExpire);
  disk_.Spill(ks_, 1, "k", 9);
  Entry* e = ks_.FindRead(1, "k", 0);
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->IsCold());
  EXPECT_EQ(e->ValueString(), v);
  EXPECT_EQ(disk_.reads, 1);
  EXPECT_EQ(ks_.cold_sync_reads(), 1u);
  EXPECT_EQ(ks_.cold_keys(), 0u);
  // Hot again: its record is garbage.
  EXPECT_EQ(disk_.freed, std::vector<uint64_t>{9});
}

TEST_F(ColdEntryTest, AFailedReadIsCountedAndTheCommandSeesNoValue) {
  ks_.SetString(0, "k", std::string(100, 'z'), Entry::kNoExpire);
  disk_.Spill(ks_, 0, "k", 3);
  disk_.records.clear();  // the disk lost it
  EXPECT_EQ(ks_.Find(0, "k", 0), nullptr);
  EXPECT_EQ(ks_.cold_sync_failures(), 1u);
  // The key is still there, cold: nothing was dropped.
  ASSERT_NE(ks_.FindMeta(0, "k", 0), nullptr);
  EXPECT_TRUE(ks_.FindMeta(0, "k", 0)->IsCold());
}

TEST_F(ColdEntryTest, CollectionsComeBackInTheirForm) {
  auto h = std::make_unique<HashObject>(ks_.heap());
  for (int i = 0; i < 2000; i++) h->Set("field" + std::to_string(i), "value" + std::to_string(i));
  ks_.SetObject(0, "h", ValueType::kHash, std::move(h), Entry::kNoExpire);
  size_t hot_bytes = ks_.type_bytes(ValueType::kHash);
  std::string before = Keyspace::Serialize(ks_.FindMeta(0, "h", 0));
  Entry* c = disk_.Spill(ks_, 0, "h", 10);
  ASSERT_TRUE(c->IsCold());
  EXPECT_EQ(c->Type(), ValueType::kHash);
  EXPECT_LT(ks_.type_bytes(ValueType::kHash) * 100, hot_bytes);  // the object is freed
  Entry* back = ks_.FindRead(0, "h", 0);
  ASSERT_NE(back, nullptr);
  ASSERT_TRUE(back->IsExternal());  // big: the object form again
  EXPECT_EQ(back->Object()->Length(), 2000u);
  EXPECT_EQ(Keyspace::Serialize(back), before);
  EXPECT_EQ(ks_.type_keys(ValueType::kHash), 1u);
}

TEST_F(ColdEntryTest, DeletesOverwritesExpiryAndFlushFreeTheDiskCopy) {
  for (int i = 0; i < 5; i++) {
    ks_.SetString(0, "k" + std::to_string(i), std::string(100, 'a' + i), i == 2 ? 10 : 0);
    disk_.Spill(ks_, 0, "k" + std::to_string(i), 100 + i);
  }
  EXPECT_TRUE(ks_.Delete(0, "k0"));
  ks_.SetString(0, "k1", "new", Entry::kNoExpire);  // overwrite
  ks_.ActiveExpireCycle(/*now_ms=*/1000, 1000);     // k2 expired
  EXPECT_EQ(disk_.freed, (std::vector<uint64_t>{100, 101, 102}));
  ks_.FlushDb(0);
  EXPECT_EQ(disk_.freed.size(), 5u);
  EXPECT_EQ(ks_.cold_keys(), 0u);
  EXPECT_EQ(ks_.cold_value_bytes(), 0u);
  EXPECT_TRUE(disk_.records.empty());
}

TEST_F(ColdEntryTest, LazyFlushFreesTheDiskCopiesLater) {
  for (int i = 0; i < 2000; i++) {
    std::string k = "k" + std::to_string(i);
    ks_.SetString(0, k, std::string(100, 'a'), Entry::kNoExpire);
    disk_.Spill(ks_, 0, k, 1 + i);
  }
  ks_.FlushDb(0, /*lazy=*/true);
  while (ks_.LazyFreeStep(256)) {
  }
  EXPECT_EQ(disk_.freed.size(), 2000u);
  EXPECT_EQ(ks_.cold_keys(), 0u);
}

TEST_F(ColdEntryTest, ExpiryChangesKeepTheLocator) {
  ks_.SetString(0, "k", std::string(100, 'q'), Entry::kNoExpire);
  disk_.Spill(ks_, 0, "k", 5);
  Entry* e = ks_.SetExpire(0, "k", 123456);
  ASSERT_TRUE(e->IsCold());
  EXPECT_EQ(e->ColdSeq(), 5u);
  EXPECT_EQ(e->ExpireMs(), 123456);
  e = ks_.SetExpire(0, "k", Entry::kNoExpire);
  EXPECT_TRUE(e->IsCold());
  EXPECT_FALSE(e->HasExpire());
  EXPECT_TRUE(disk_.freed.empty());
  EXPECT_EQ(ks_.FindRead(0, "k", 0)->ValueString(), std::string(100, 'q'));
}

TEST_F(ColdEntryTest, InsertColdIsWhatASnapshotLoadMakes) {
  disk_.records[42] = "restored";
  ks_.InsertCold(2, "k", ValueType::kString, 8, 42, 8, Entry::kNoExpire);
  EXPECT_EQ(ks_.cold_keys(), 1u);
  EXPECT_EQ(ks_.FindMeta(2, "k", 0)->ValueLen(), 8u);
  EXPECT_EQ(ks_.FindRead(2, "k", 0)->ValueString(), "restored");
}

TEST(SpillPickerTest, TakesTheColdestEligibleValues) {
  Keyspace ks(1);
  access::Clock clock;
  clock.mode = access::Mode::kLru;
  clock.lru_clock = 1000;
  ks.SetAccessClock(clock);
  for (int i = 0; i < 200; i++) {
    ks.SetString(0, "old" + std::to_string(i), std::string(100, 'o'), Entry::kNoExpire);
  }
  clock.lru_clock = 5000;
  ks.SetAccessClock(clock);
  for (int i = 0; i < 200; i++) {
    ks.SetString(0, "new" + std::to_string(i), std::string(100, 'n'), Entry::kNoExpire);
    ks.SetString(0, "tiny" + std::to_string(i), "t", Entry::kNoExpire);
  }
  clock.lru_clock = 6000;
  ks.SetAccessClock(clock);
  SpillPicker picker;
  std::vector<SpillPicker::Pick> picks;
  auto none = [](uint32_t, const Entry*) { return false; };
  for (int round = 0; round < 20; round++) picker.Round(ks, 64, 32, none, &picks);
  ASSERT_FALSE(picks.empty());
  size_t old = 0;
  for (const auto& p : picks) {
    EXPECT_GE(p.entry->ValueLen(), 64u);  // never the tiny ones
    if (p.entry->Key().substr(0, 3) == "old") old++;
  }
  // The older half is preferred (sampled LRU: mostly, not always).
  EXPECT_GT(old * 10, picks.size() * 8) << old << " of " << picks.size();
  EXPECT_FALSE(picker.exhausted());
}

TEST(SpillPickerTest, ExhaustedWhenNothingIsEligible) {
  Keyspace ks(2);
  FakeDisk disk;
  ks.set_cold_hook(&disk);
  for (int i = 0; i < 50; i++) {
    std::string k = "k" + std::to_string(i);
    ks.SetString(1, k, std::string(100, 'x'), Entry::kNoExpire);
    disk.Spill(ks, 1, k, 1 + i);
    ks.SetString(1, "small" + std::to_string(i), "s", Entry::kNoExpire);
  }
  SpillPicker picker;
  std::vector<SpillPicker::Pick> picks;
  auto none = [](uint32_t, const Entry*) { return false; };
  bool exhausted = false;
  for (int round = 0; round < 50 && !exhausted; round++) {
    EXPECT_EQ(picker.Round(ks, 64, 32, none, &picks), 0u);
    exhausted = picker.exhausted();
  }
  EXPECT_TRUE(exhausted);
  // A skipped value (being written) is not nothing.
  ks.SetString(1, "hot", std::string(100, 'h'), Entry::kNoExpire);
  auto skip_all = [](uint32_t, const Entry*) { return true; };
  for (int round = 0; round < 50; round++) picker.Round(ks, 64, 32, skip_all, &picks);
  EXPECT_FALSE(picker.exhausted());
  EXPECT_TRUE(picks.empty());
}

}  // namespace
}  // namespace strata
