// ShardLoadJob: loads a snapshot chain into one shard, a slice at a time.
//
// Each shard's worker runs one job at startup, all in parallel (server/persistence/snapshot.h).
// The job walks the manifest's chain in order - the base, then each delta - over the
// files of every shard of the thread count that wrote it, and keeps the keys that hash
// to its own shard under the current thread count. When the thread count has not
// changed it reads only its own shard's files (the others cannot hold its keys).
// A delta first deletes, in each of its dirty ranges, the keys the writing shard owned,
// then applies its records, so base + deltas equals the data at the last cut.
// Expired keys are skipped. Any damage is an error naming the file and the offset; the
// caller refuses to start (or, when told to, starts empty) - never a partial load.
//
// Thread-safety: owned by the shard's thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/keyspace.h"
#include "storage/dirty_ranges.h"
#include "storage/file_io.h"
#include "storage/load_job.h"
#include "storage/manifest.h"
#include "storage/shard_snapshot.h"
#include "storage/status.h"

namespace strata {

class ShardLoadJob final : public LoadJob {
 public:
  ShardLoadJob(Keyspace& ks, std::string dir, const Manifest& m, uint32_t shard,
               uint32_t shard_count);
  // Applies records for about budget_ns; *done when the whole chain is loaded.
  Status Step(int64_t budget_ns, int64_t now_ms, bool* done) override;
  const LoadStats& stats() const override { return stats_; }
  // Cold records (values in the spill store) are loaded as cold entries: the shard's
  // store was restored from the chain's checkpoint. Without this they are an error.
  void AllowCold();
  static constexpr size_t kRecordsPerCall = 32;

 private:
  struct Item {
    std::string path;
    uint32_t old_shard;
  };
  Status OpenNext();
  Keyspace& ks_;
  std::string dir_;
  uint32_t shard_;
  uint32_t shard_count_;
  uint32_t old_count_;
  std::vector<Item> items_;
  size_t next_ = 0;
  bool open_ = false;
  MappedFile file_;
  ShardSnapshotReader reader_;
  LoadStats stats_;
  int64_t now_ms_ = 0;
};

}  // namespace strata
