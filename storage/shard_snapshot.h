// ShardSnapshot: the contents of one shard's snapshot file, written and read in memory.
//
// A file is a sequence of blocks (block.h): first a header block, for a delta then a
// block of the dirty hash ranges it replaces, then entry blocks of about `block_bytes`
// raw bytes each (records never span blocks), then a trailer block whose record count
// must match what was read. docs/FORMAT.md specifies the records.
// The writer streams: a caller writing a big shard takes output() as it grows and
// writes it out, so no more than a block or two is ever held in memory. The reader is
// resumable (Next() delivers a bounded number of records per call), so a shard thread
// can load a big file a slice at a time between serving clients.
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
#include "storage/varint.h"

namespace strata {

constexpr uint32_t kSnapshotVersion = 1;

enum class SnapshotKind : uint8_t { kFull = 0, kDelta = 1 };

struct SnapshotHeader {
  uint32_t version = kSnapshotVersion;
  SnapshotKind kind = SnapshotKind::kFull;
  uint32_t shard = 0;
  uint32_t shard_count = 1;
  uint64_t seq = 0;  // the snapshot's sequence number (its manifest's)
  int64_t created_ms = 0;
};

// A cold record's locator: the value's length as the client sees it, its record in the
// spill store and the serialized value's length there.
struct ColdRecord {
  uint32_t value_len = 0;
  uint64_t seq = 0;
  uint32_t disk_len = 0;
};

class ShardSnapshotWriter {
 public:
  static constexpr size_t kDefaultBlockBytes = 64 * 1024;

  // For a delta, `ranges` is the dirty-range set it replaces (DirtyRanges::Encode);
  // it is written right after the header.
  ShardSnapshotWriter(BlockCodec codec, const SnapshotHeader& header,
                      size_t block_bytes = kDefaultBlockBytes, std::string_view ranges = {});
  // One key: its database, type, key, value (strings: the value; collections: the
  // canonical serialized form) and absolute expiry (Entry::kNoExpire for none).
  void Add(uint32_t db, ValueType type, std::string_view key, std::string_view value,
           int64_t expire_ms);
  // A key whose value is in the shard's spill store (docs/FORMAT.md "Cold records"):
  // the record names it by sequence number in the snapshot's checkpoint of the store.
  void AddCold(uint32_t db, ValueType type, std::string_view key, const ColdRecord& cold,
               int64_t expire_ms);
  // Encoded bytes not yet taken: a streaming caller writes them out and clears it.
  std::string* output() { return &out_; }
  // Flushes the last block and appends the trailer; returns what output() then holds
  // (the whole file when the caller never took any). The writer is spent afterwards.
  std::string Finish();
  uint64_t records() const { return records_; }
  // Raw (uncompressed) record bytes added so far, and those still in the open block.
  uint64_t raw_bytes() const { return raw_bytes_; }
  size_t pending_bytes() const { return pending_.size(); }

 private:
  void FlushBlock();
  BlockCodec codec_;
  size_t block_bytes_;
  std::string out_;
  std::string pending_;
  uint64_t records_ = 0;
  uint64_t raw_bytes_ = 0;
  static constexpr int kMissesToSkip = 4;
  static constexpr int kSkipBlocks = 28;
  int misses_ = 0;
  int skip_ = 0;
};

using SnapshotSink = std::function<Status(uint32_t db, ValueType type, std::string_view key,
                                          std::string_view value, int64_t expire_ms)>;

using ColdSnapshotSink = std::function<Status(uint32_t db, ValueType type, std::string_view key,
                                              const ColdRecord& cold, int64_t expire_ms)>;

// Reads one file a slice at a time. `file` must stay valid while the reader is used.
class ShardSnapshotReader {
 public:
  // Where cold records go; without one, a cold record is an error (the snapshot needs
  // its spill checkpoint, so spill-dir must be set).
  void set_cold_sink(ColdSnapshotSink sink) { cold_sink_ = std::move(sink); }
  // Checks and reads the header (and a delta's range block).
  Status Open(std::string_view file, std::string_view name);
  const SnapshotHeader& header() const { return header_; }
  // A delta's dirty-range set, as written (DirtyRanges::Decode reads it); empty for a
  // full snapshot.
  std::string_view ranges() const { return ranges_; }
  // Delivers records to sink until `max_records` have been delivered in this call or
  // the trailer is reached (then *done); a later call resumes where this one stopped. Any damage is
  // an error naming the file and the block's offset.
  Status Next(const SnapshotSink& sink, size_t max_records, bool* done);
  size_t offset() const { return pos_; }
  uint64_t records() const { return records_; }

 private:
  Status Bad(std::string_view why, size_t offset) const;
  std::string_view file_;
  std::string name_;
  size_t pos_ = 0;
  SnapshotHeader header_;
  std::string ranges_;
  std::string block_;     // the current entry block, decoded
  size_t block_pos_ = 0;  // next record in block_
  size_t block_offset_ = 0;
  uint64_t records_ = 0;
  bool done_ = false;
  ColdSnapshotSink cold_sink_;
};

// Reads a whole file, calling sink for every record in order. `name` (the file's name)
// and block offsets appear in every error. Refuses a wrong magic or version, a damaged
// block, a malformed record, a missing trailer or a record count that does not match.
Status ReadShardSnapshot(std::string_view file, std::string_view name, SnapshotHeader* header,
                         const SnapshotSink& sink);

}  // namespace strata
