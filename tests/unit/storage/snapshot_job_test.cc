// ShardSnapshotJob and ShardLoadJob: a snapshot taken while the keyspace keeps changing
// is the keyspace as it was at the cut; a delta chain loads to the data at its last cut;
// the keys a load leaves out as expired are told only when no later record brings them
// back.
#include "storage/snapshot_job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/hash.h"
#include "core/keyspace.h"
#include "core/packed_list.h"
#include "storage/file_io.h"
#include "storage/manifest.h"
#include "storage/snapshot_loader.h"
#include "tests/unit/scaled.h"

namespace strata {
namespace {

constexpr int64_t kFuture = 4102444800000;  // 2100

using Image = std::map<std::string, std::string>;

Image DumpImage(Keyspace& ks, int64_t now_ms = 0) {
  Image out;
  for (uint32_t db = 0; db < ks.db_count(); db++) {
    ks.table(db).ForEach([&](Entry* e) {
      if (e->IsExpired(now_ms)) return;
      out[std::to_string(db) + ":" + std::string(e->Key())] =
          std::string(ValueTypeName(e->Type())) + "|" + std::to_string(e->ExpireMs()) + "|" +
          Keyspace::Serialize(e);
    });
  }
  return out;
}

std::string Packed(int n, int salt) {
  packed::Builder b;
  for (int i = 0; i < n; i++) {
    b.Add("f" + std::to_string(i));
    b.Add("v" + std::to_string(i * salt));
  }
  return b.Finish();
}

// One random change: overwrite, new key, delete, TTL change, collection rewrite.
void Mutate(Keyspace& ks, std::mt19937_64& rng, int keys) {
  uint32_t db = rng() % 2;
  std::string key = "k" + std::to_string(rng() % keys);
  switch (rng() % 6) {
    case 0:
    case 1:
      ks.SetString(db, key, "new" + std::to_string(rng()), Entry::kNoExpire);
      break;
    case 2:
      ks.Delete(db, key, rng() % 2 == 0);
      break;
    case 3:
      if (ks.Find(db, key, 0) != nullptr) ks.SetExpire(db, key, kFuture + rng() % 1000);
      break;
    case 4:
      ks.SetRaw(db, key, Packed(static_cast<int>(rng() % 300), static_cast<int>(rng() % 7)),
                ValueType::kHash, Entry::kNoExpire);
      break;
    default:
      (void)ks.Find(db, key, 0);  // a write command's lookup with no change
      break;
  }
}

void Fill(Keyspace& ks, int keys) {
  for (int i = 0; i < keys; i++) {
    std::string k = "k" + std::to_string(i);
    if (i % 10 == 0) {
      ks.SetRaw(i % 2, k, Packed(i % 200, 1), ValueType::kHash,
                i % 3 == 0 ? kFuture : Entry::kNoExpire);
    } else {
      ks.SetString(i % 2, k, "value-" + std::to_string(i), i % 7 == 0 ? kFuture : Entry::kNoExpire);
    }
  }
}

class SnapshotJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "strata-snapjob-" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes one shard's file with `ranges` (a delta when non-null), mutating the keyspace
  // between slices; returns the image at the cut.
  Image WriteWithWrites(Keyspace& ks, const std::string& name, SnapshotKind kind,
                        std::unique_ptr<RangeSet> ranges, std::mt19937_64& rng, int keys,
                        ManifestFile* mf) {
    SnapshotHeader h;
    h.kind = kind;
    h.seq = 1;
    ShardSnapshotJob job(ks, JoinPath(dir_, name), BlockCodec::kLz4, h);
    EXPECT_TRUE(job.Open().ok());
    Image at_cut = DumpImage(ks);
    job.Start(std::move(ranges));
    int slices = 0;
    while (!job.Step(1)) {  // a handful of segments per slice
      for (int i = 0; i < 50; i++) Mutate(ks, rng, keys);
      if (++slices == 100) ks.FlushDb(1, true);  // finishes the traversal first
    }
    Status s = job.Finish();
    EXPECT_TRUE(s.ok()) << s.ToString();
    close(job.ReleaseFd());
    mf->name = name;
    mf->bytes = std::filesystem::file_size(JoinPath(dir_, name));
    mf->records = job.records();
    EXPECT_GT(slices, 10);
    return at_cut;
  }

  // Writes one shard's file of the keyspace as it is (no writes meanwhile).
  void WriteStill(Keyspace& ks, const std::string& name, SnapshotKind kind,
                  std::unique_ptr<RangeSet> ranges, ManifestFile* mf) {
    SnapshotHeader h;
    h.kind = kind;
    h.seq = 1;
    ShardSnapshotJob job(ks, JoinPath(dir_, name), BlockCodec::kLz4, h);
    ASSERT_TRUE(job.Open().ok());
    job.Start(std::move(ranges));
    while (!job.Step(1000)) {
    }
    ASSERT_TRUE(job.Finish().ok());
    close(job.ReleaseFd());
    mf->name = name;
    mf->bytes = std::filesystem::file_size(JoinPath(dir_, name));
    mf->records = job.records();
  }

  Image Load(const Manifest& m, uint32_t shards, Status* status) {
    Image all;
    for (uint32_t s = 0; s < shards; s++) {
      Keyspace ks(2);
      ShardLoadJob job(ks, dir_, m, s, shards);
      bool done = false;
      while (!done) {
        *status = job.Step(1000000, 0, &done);
        if (!status->ok()) return {};
      }
      for (auto& [k, v] : DumpImage(ks)) {
        EXPECT_EQ(ShardOfKey(k.substr(2), shards), s) << k;
        all[k] = v;
      }
    }
    return all;
  }

  std::string dir_;
};

TEST_F(SnapshotJobTest, FullSnapshotIsThePointInTimeImageDespiteWrites) {
  Keyspace ks(2);
  constexpr int kKeys = test_scale::Steps(60000);
  Fill(ks, kKeys);
  std::mt19937_64 rng(7);
  Manifest m;
  m.shard_count = 1;
  m.chain.push_back({});
  m.chain[0].files.resize(1);
  Image at_cut = WriteWithWrites(ks, "full.snap", SnapshotKind::kFull, nullptr, rng, kKeys,
                                 &m.chain[0].files[0]);
  EXPECT_NE(DumpImage(ks), at_cut);  // the writes did change the live data
  Status s;
  EXPECT_EQ(Load(m, 1, &s), at_cut);
  EXPECT_TRUE(s.ok()) << s.ToString();
  // Loaded by three shards (a new thread count), the union is the same image.
  EXPECT_EQ(Load(m, 3, &s), at_cut);
}

TEST_F(SnapshotJobTest, BasePlusDeltasEqualsTheDataAtTheLastCut) {
  Keyspace ks(2);
  constexpr int kKeys = test_scale::Steps(60000);
  Fill(ks, kKeys);
  DirtyRanges tracker;
  std::mt19937_64 rng(11);
  Manifest m;
  m.shard_count = 1;
  m.chain.resize(1);
  m.chain[0].files.resize(1);
  ks.set_change_tracker(&tracker);
  (void)tracker.Take();
  WriteWithWrites(ks, "base.snap", SnapshotKind::kFull, std::make_unique<RangeSet>(tracker.Take()),
                  rng, kKeys, &m.chain[0].files[0]);
  Image last;
  for (int d = 0; d < 3; d++) {
    // Changes between snapshots, including expirations done by the active cycle.
    for (int i = 0; i < 500; i++) Mutate(ks, rng, kKeys);
    ks.SetString(0, "short" + std::to_string(d), "x", 1000);
    ks.SetString(0, "k" + std::to_string(d), "y", 5);
    ks.ActiveExpireCycle(2000, 1u << 20);
    ManifestLink link;
    link.kind = SnapshotKind::kDelta;
    link.files.resize(1);
    auto ranges = std::make_unique<RangeSet>(tracker.Take());
    EXPECT_GT(ranges->Cardinality(), 0u);
    last = WriteWithWrites(ks, "delta" + std::to_string(d) + ".snap", SnapshotKind::kDelta,
                           std::move(ranges), rng, kKeys, &link.files[0]);
    // A delta holds only the changed ranges: far fewer keys than the base.
    EXPECT_LT(link.files[0].records, m.chain[0].files[0].records) << d;
    m.chain.push_back(std::move(link));
  }
  Status s;
  EXPECT_EQ(Load(m, 1, &s), last);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Load(m, 2, &s), last);
  ks.set_change_tracker(nullptr);
}

TEST_F(SnapshotJobTest, DamagedFileIsRefusedWithItsNameAndOffset) {
  Keyspace ks(2);
  Fill(ks, 60000);
  std::mt19937_64 rng(3);
  Manifest m;
  m.shard_count = 1;
  m.chain.resize(1);
  m.chain[0].files.resize(1);
  WriteWithWrites(ks, "f.snap", SnapshotKind::kFull, nullptr, rng, 60000, &m.chain[0].files[0]);
  std::string path = JoinPath(dir_, "f.snap");
  std::string data;
  ASSERT_TRUE(ReadWholeFile(path, &data).ok());
  data[data.size() / 2] ^= 0x40;
  ASSERT_TRUE(WriteFileAtomically(dir_, "f.snap", data).ok());
  Status s;
  Load(m, 1, &s);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("f.snap"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("offset"), std::string::npos) << s.message();
}

TEST_F(SnapshotJobTest, AFullDiskIsReportedAndCaptureStillEnds) {
  Keyspace ks(1);
  for (int i = 0; i < 5000; i++) ks.SetString(0, "k" + std::to_string(i), "v", Entry::kNoExpire);
  SnapshotHeader h;
  ShardSnapshotJob job(ks, "/dev/full", BlockCodec::kNone, h);
  ASSERT_TRUE(job.Open().ok());
  job.Start(nullptr);
  EXPECT_TRUE(ks.capturing());
  Status s = job.Finish();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kNoSpace) << s.ToString();
  EXPECT_FALSE(ks.capturing());
  ks.SetString(0, "after", "ok", Entry::kNoExpire);  // no hook left behind
  EXPECT_NE(ks.Find(0, "after", 0), nullptr);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

class DroppedKeys final : public KeyEventHook {
 public:
  void KeyExpired(uint32_t, std::string_view) override {}
  void KeyCreated(uint32_t, std::string_view) override {}
  void KeyEvicted(uint32_t, std::string_view) override {}
  void KeyDroppedOnLoad(uint32_t db, std::string_view key) override {
    told.emplace_back(db, std::string(key));
  }
  std::vector<std::pair<uint32_t, std::string>> told;
};

TEST_F(SnapshotJobTest, AKeyExpiredInTheBaseButLiveInADeltaIsNotToldAsDropped) {
  // The base holds "back" and "gone" with a TTL of 1000 ms; a delta holds "back" again
  // without one. Loaded at 5000 ms, both base records have expired: "back" comes back
  // from the delta and must not be told as dropped (a master would send its replicas a
  // DEL for a key it keeps); "gone" is told once.
  Keyspace ks(2);
  DirtyRanges tracker;
  ks.set_change_tracker(&tracker);
  ks.SetString(0, "back", "v", 1000);
  ks.SetString(0, "gone", "v", 1000);
  ks.SetString(1, "kept", "v", Entry::kNoExpire);
  Manifest m;
  m.shard_count = 1;
  m.chain.resize(2);
  m.chain[0].files.resize(1);
  (void)tracker.Take();
  WriteStill(ks, "base.snap", SnapshotKind::kFull, nullptr, &m.chain[0].files[0]);
  ks.SetExpire(0, "back", Entry::kNoExpire);
  m.chain[1].kind = SnapshotKind::kDelta;
  m.chain[1].files.resize(1);
  WriteStill(ks, "delta.snap", SnapshotKind::kDelta, std::make_unique<RangeSet>(tracker.Take()),
             &m.chain[1].files[0]);
  ks.set_change_tracker(nullptr);

  Keyspace loaded(2);
  DroppedKeys hook;
  loaded.set_event_hook(&hook);
  ShardLoadJob job(loaded, dir_, m, 0, 1);
  bool done = false;
  while (!done) {
    Status st = job.Step(1000000, 5000, &done);
    ASSERT_TRUE(st.ok()) << st.ToString();
    if (!done) {
      EXPECT_TRUE(hook.told.empty());  // told only once the chain is loaded
    }
  }
  EXPECT_NE(loaded.FindMeta(0, "back", 5000), nullptr);
  EXPECT_EQ(loaded.FindMeta(0, "gone", 5000), nullptr);
  EXPECT_NE(loaded.FindMeta(1, "kept", 5000), nullptr);
  ASSERT_EQ(hook.told.size(), 1u);
  EXPECT_EQ(hook.told[0], std::make_pair(uint32_t{0}, std::string("gone")));
  loaded.set_event_hook(nullptr);
}

}  // namespace
}  // namespace strata
