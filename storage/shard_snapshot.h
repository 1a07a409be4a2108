// ShardSnapshot: the contents of one shard's snapshot file, written and read in memory.
//
// A file is a sequence of blocks (block.h): first a header block, then entry blocks of
// about `block_bytes` raw bytes each (records never span blocks), then a trailer block
// whose record count must match what was read. docs/FORMAT.md specifies the records.
// Collections are stored in their canonical serialized form (core/object.h), so a
// loader rebuilds each value with Keyspace::SetRaw, in whatever encoding its size calls
// for, on whatever shard the key hashes to.
//
// Thread-safety: a writer belongs to the thread that fills it; ReadShardSnapshot is a
// pure function of its input.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/entry.h"
#include "storage/block.h"
#include "storage/status.h"

namespace strata {

constexpr uint32_t kSnapshotVersion = 1;

struct SnapshotHeader {
  uint32_t version = kSnapshotVersion;
  uint32_t shard = 0;
  uint32_t shard_count = 1;
  int64_t created_ms = 0;
};

class ShardSnapshotWriter {
 public:
  static constexpr size_t kDefaultBlockBytes = 64 * 1024;

  ShardSnapshotWriter(BlockCodec codec, const SnapshotHeader& header,
                      size_t block_bytes = kDefaultBlockBytes);
  // One key: its database, type, key, value (strings: the value; collections: the
  // canonical serialized form) and absolute expiry (Entry::kNoExpire for none).
  void Add(uint32_t db, ValueType type, std::string_view key, std::string_view value,
           int64_t expire_ms);
  // The file's bytes; the writer is spent afterwards.
  std::string Finish();
  uint64_t records() const { return records_; }

 private:
  void FlushBlock();
  BlockCodec codec_;
  size_t block_bytes_;
  std::string out_;
  std::string pending_;
  uint64_t records_ = 0;
};

using SnapshotSink = std::function<Status(uint32_t db, ValueType type, std::string_view key,
                                          std::string_view value, int64_t expire_ms)>;

// Reads a whole file, calling sink for every record in order. `name` (the file's name)
// and block offsets appear in every error. Refuses a wrong magic or version, a damaged
// block, a malformed record, a missing trailer or a record count that does not match.
Status ReadShardSnapshot(std::string_view file, std::string_view name, SnapshotHeader* header,
                         const SnapshotSink& sink);

}  // namespace strata
