// RdbShardLoadJob: loads one shard's share of a Redis RDB file at startup (a migration:
// stop Redis, start strata on its file), a time slice per call.
//
// Every shard reads the whole file at once, in parallel, and keeps the keys that hash to
// it: the others' values are stepped over by their framing without being decoded
// (rdb_value.h SkipValue), so the decoding and inserting - most of the cost - is split
// between the shards and no records cross threads. Shard 0's job alone checks the
// checksum, on a thread of its own that reads the mapped file beside the load (joined
// when the load reaches the end; the load is refused if it does not match).
// Each key is decoded and checked in full by the shard that keeps it.
//
// What strata cannot hold is refused with the key, database and offset: a stream, a
// module value (unless skip_modules), a hash field with its own live TTL, a database
// beyond `databases`. Expired keys and empty collections are skipped and counted, as
// Redis does. LRU idle times and LFU counters are kept when the eviction policy reads
// the same kind. Function libraries are counted and their code kept (stats().function_codes) for
// the server to load. On any error the caller drops everything every shard loaded (snapshot.h).
//
// Thread-safety: owned by the shard's thread.
#pragma once

#include <cstdint>
#include <string>
#include <thread>

#include "core/keyspace.h"
#include "storage/file_io.h"
#include "storage/load_job.h"
#include "storage/rdb_reader.h"

namespace strata {

class RdbShardLoadJob final : public LoadJob {
 public:
  struct Options {
    bool skip_modules = false;
    bool verify_checksum = true;  // rdbchecksum; only shard 0 computes it
    uint64_t max_string_bytes = uint64_t{512} << 20;
    // A replica's load keeps keys whose TTL has passed, as Redis's does: its master
    // deletes them, and its DEL arrives in the stream. Otherwise they are skipped.
    bool keep_expired_keys = false;
  };
  RdbShardLoadJob(Keyspace& ks, std::string path, uint32_t shard, uint32_t shard_count,
                  const Options& opts);
  ~RdbShardLoadJob() override;
  Status Step(int64_t budget_ns, int64_t now_ms, bool* done) override;
  const LoadStats& stats() const override { return stats_; }
  // After the load: the file's RDB version and whether its checksum was compared.
  int version() const { return reader_ ? reader_->version() : 0; }
  bool checksum_verified() const { return verified_; }

  // Reads the header only (main thread, before the workers start): "" when path is an
  // RDB file whose version this reader knows, else why not.
  static std::string CheckHeader(const std::string& path);
  // True when the file at path starts like an RDB ("REDIS" or "VALKEY").
  static bool LooksLikeRdb(const std::string& path);

 private:
  Status Open();
  Status Fail(const std::string& what) const;
  Status Apply(const rdb::RdbRecord& rec, int64_t now_ms);
  Status CheckChecksum();

  Keyspace& ks_;
  std::string path_;
  uint32_t shard_;
  uint32_t shard_count_;
  Options opts_;
  MappedFile file_;
  std::unique_ptr<rdb::RdbReader> reader_;
  static constexpr size_t kLookahead = 8;
  rdb::RdbRecord ring_[kLookahead];
  size_t head_ = 0;
  size_t pending_ = 0;
  bool reader_done_ = false;
  LoadStats stats_;
  bool check_crc_ = false;
  bool verified_ = false;
  std::thread crc_thread_;
  uint64_t crc_ = 0;  // of every byte but the last 8, written by crc_thread_
};

}  // namespace strata
