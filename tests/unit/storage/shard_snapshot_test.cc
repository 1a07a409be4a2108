#include "storage/shard_snapshot.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/hash_type.h"
#include "core/keyspace.h"
#include "core/list_type.h"
#include "core/packed_list.h"
#include "core/set_type.h"
#include "core/zset_type.h"

namespace strata {
namespace {

std::string Packed(const std::vector<std::string>& items) {
  packed::Builder b;
  for (const std::string& s : items) b.Add(s);
  return b.Finish();
}

// A keyspace with every type, small and big forms, TTLs and two databases.
void Fill(Keyspace& ks) {
  ks.SetString(0, "s", "plain", Entry::kNoExpire);
  ks.SetString(0, "ttl", std::string(100, 'x'), 4102444800000);
  ks.SetString(1, "bin", std::string("\0\xff\r\n", 4), Entry::kNoExpire);
  std::vector<std::string> small_hash = {"f1", "v1", "f2", "v2"}, big_hash, big_list, big_set;
  for (int i = 0; i < 2000; i++) {
    big_hash.push_back("field" + std::to_string(i));
    big_hash.push_back("value" + std::to_string(i));
    big_list.push_back("element" + std::to_string(i % 10));
    big_set.push_back("member" + std::to_string(i));
  }
  ks.SetRaw(0, "h", Packed(small_hash), ValueType::kHash, Entry::kNoExpire);
  ks.SetRaw(0, "H", Packed(big_hash), ValueType::kHash, 4102444800000);
  ks.SetRaw(0, "l", Packed({"a", "b", "c"}), ValueType::kList, Entry::kNoExpire);
  ks.SetRaw(1, "L", Packed(big_list), ValueType::kList, Entry::kNoExpire);
  ks.SetRaw(0, "i", intset::Encode({1, 5, 70000}), ValueType::kSet, Entry::kNoExpire);
  ks.SetRaw(0, "S", Packed(big_set), ValueType::kSet, Entry::kNoExpire);
  std::vector<std::string> names;
  std::vector<ZMember> small_z = {{"a", 1.5}, {"b", 2}}, big_z;
  for (int i = 0; i < 1000; i++) names.push_back("m" + std::to_string(i));
  for (int i = 0; i < 1000; i++) big_z.push_back({names[i], i * 0.25});
  StoreZSet(ks, 0, "z", &small_z);
  StoreZSet(ks, 1, "Z", &big_z);
}

std::map<std::string, std::string> Dump(Keyspace& ks) {
  std::map<std::string, std::string> out;
  for (uint32_t db = 0; db < ks.db_count(); db++) {
    ks.table(db).ForEach([&](Entry* e) {
      out[std::to_string(db) + ":" + std::string(e->Key())] =
          std::string(ValueTypeName(e->Type())) + "|" + std::to_string(e->ExpireMs()) + "|" +
          Keyspace::Serialize(e);
    });
  }
  return out;
}

std::string Write(Keyspace& ks, BlockCodec codec, size_t block_bytes) {
  SnapshotHeader h;
  h.shard = 3;
  h.shard_count = 4;
  h.created_ms = 1234;
  ShardSnapshotWriter w(codec, h, block_bytes);
  for (uint32_t db = 0; db < ks.db_count(); db++) {
    ks.table(db).ForEach(
        [&](Entry* e) { w.Add(db, e->Type(), e->Key(), Keyspace::Serialize(e), e->ExpireMs()); });
  }
  return w.Finish();
}

Status Load(std::string_view file, Keyspace& ks, SnapshotHeader* h) {
  return ReadShardSnapshot(
      file, "shard-3.snap", h,
      [&](uint32_t db, ValueType t, std::string_view k, std::string_view v, int64_t exp) {
        ks.SetRaw(db, k, v, t, exp);
        return Status::Ok();
      });
}

class ShardSnapshotTest : public ::testing::TestWithParam<BlockCodec> {};

TEST_P(ShardSnapshotTest, EveryTypeRoundTrips) {
  Keyspace src(2);
  Fill(src);
  std::string file = Write(src, GetParam(), 4096);
  Keyspace dst(2);
  SnapshotHeader h;
  Status s = Load(file, dst, &h);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(h.shard, 3u);
  EXPECT_EQ(h.shard_count, 4u);
  EXPECT_EQ(h.created_ms, 1234);
  EXPECT_EQ(Dump(dst), Dump(src));
  // Big collections come back in their big form.
  EXPECT_TRUE(dst.Find(0, "H", 0)->IsExternal());
  EXPECT_TRUE(dst.Find(1, "Z", 0)->IsExternal());
  EXPECT_FALSE(dst.Find(0, "h", 0)->IsExternal());
}

TEST_P(ShardSnapshotTest, TruncationAndCorruptionAreRefusedWithTheOffset) {
  Keyspace src(2);
  Fill(src);
  std::string file = Write(src, GetParam(), 1024);
  for (size_t cut = 0; cut < file.size(); cut += file.size() / 97 + 1) {
    Keyspace dst(2);
    SnapshotHeader h;
    Status s = Load(std::string_view(file).substr(0, cut), dst, &h);
    EXPECT_FALSE(s.ok()) << cut;
    EXPECT_NE(s.message().find("shard-3.snap"), std::string::npos) << s.message();
  }
  for (size_t i = 0; i < file.size(); i += file.size() / 53 + 1) {
    std::string bad = file;
    bad[i] ^= 0x01;
    Keyspace dst(2);
    SnapshotHeader h;
    EXPECT_FALSE(Load(bad, dst, &h).ok()) << i;
  }
  Keyspace dst(2);
  SnapshotHeader h;
  EXPECT_FALSE(Load(file + "x", dst, &h).ok());
}

INSTANTIATE_TEST_SUITE_P(Codecs, ShardSnapshotTest,
                         ::testing::Values(BlockCodec::kNone, BlockCodec::kLz4, BlockCodec::kZstd));

TEST(ShardSnapshotFormatTest, WrongMagicAndVersion) {
  std::string not_ours;
  EncodeBlock(BlockCodec::kNone, "REDIS0011", &not_ours);
  SnapshotHeader h;
  Status s = ReadShardSnapshot(not_ours, "dump.rdb", &h,
                               [](uint32_t, ValueType, std::string_view, std::string_view,
                                  int64_t) { return Status::Ok(); });
  EXPECT_NE(s.message().find("not a strata snapshot"), std::string::npos);
  SnapshotHeader future;
  future.version = 99;
  ShardSnapshotWriter w(BlockCodec::kNone, future);
  std::string file = w.Finish();
  s = ReadShardSnapshot(file, "new.snap", &h,
                        [](uint32_t, ValueType, std::string_view, std::string_view, int64_t) {
                          return Status::Ok();
                        });
  EXPECT_NE(s.message().find("version 99"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace strata
