#include "storage/snapshot_rdb.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/entry.h"
#include "storage/rdb_reader.h"

namespace strata {
namespace {

// A shard file holding `keys` (db, key) string keys, as a descriptor open for reading.
int ShardFile(uint32_t shard, const std::vector<std::pair<uint32_t, std::string>>& keys) {
  SnapshotHeader h;
  h.shard = shard;
  h.shard_count = 2;
  ShardSnapshotWriter w(BlockCodec::kNone, h);
  for (const auto& [db, key] : keys) {
    w.Add(db, ValueType::kString, key, "value-of-" + key, Entry::kNoExpire);
  }
  std::string bytes = w.Finish();
  FILE* f = tmpfile();
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  fflush(f);
  int fd = dup(fileno(f));
  fclose(f);
  return fd;
}

struct Read {
  std::map<std::string, std::string> keys;           // "db:key" -> value
  std::vector<std::pair<uint32_t, uint64_t>> sizes;  // each RESIZEDB: (db, db_size)
};

Read Encode(std::vector<uint64_t> db_keys) {
  std::vector<int> fds = {ShardFile(0, {{0, "a"}, {0, "b"}, {1, "x"}}),
                          ShardFile(1, {{0, "c"}, {1, "y"}})};
  rdb::RdbWriter::Options o;
  SnapshotRdbEncoder enc(fds, {}, o, "7.0.0", std::move(db_keys));
  std::string rdb;
  bool done = false;
  while (!done) EXPECT_TRUE(enc.Next(1 << 16, &rdb, &done).ok());
  Read out;
  rdb::RdbReader r(rdb, {});
  EXPECT_TRUE(r.ReadHeader()) << r.error();
  rdb::RdbRecord rec;
  while (r.Next(&rec) && rec.kind != rdb::RdbRecord::Kind::kEnd) {
    if (rec.kind == rdb::RdbRecord::Kind::kResizeDb) out.sizes.emplace_back(rec.db, rec.db_size);
    if (rec.kind == rdb::RdbRecord::Kind::kKey) {
      out.keys[std::to_string(rec.db) + ":" + rec.name] = rec.value.data;
    }
  }
  EXPECT_EQ(rec.kind, rdb::RdbRecord::Kind::kEnd) << r.error();
  return out;
}

// Every SELECTDB is followed by RESIZEDB with the database's count over all the files, so
// a loader sizes its table once (a replica's load took twice as long without it).
TEST(SnapshotRdbEncoderTest, ResizeDbCarriesEachDatabasesKeysOverAllFiles) {
  Read got = Encode({3, 2});
  std::map<std::string, std::string> want = {{"0:a", "value-of-a"},
                                             {"0:b", "value-of-b"},
                                             {"0:c", "value-of-c"},
                                             {"1:x", "value-of-x"},
                                             {"1:y", "value-of-y"}};
  EXPECT_EQ(got.keys, want);
  ASSERT_EQ(got.sizes.size(), 4u);  // db 0 and db 1 in each of the two files
  for (const auto& [db, size] : got.sizes) EXPECT_EQ(size, db == 0 ? 3u : 2u) << db;
}

TEST(SnapshotRdbEncoderTest, UnknownCountsAreWrittenAsZero) {
  Read got = Encode({});
  EXPECT_EQ(got.keys.size(), 5u);
  ASSERT_EQ(got.sizes.size(), 4u);
  for (const auto& [db, size] : got.sizes) EXPECT_EQ(size, 0u) << db;
}

}  // namespace
}  // namespace strata
