// ShardLoadJob: loads a snapshot chain into one shard, a slice at a time.
//
// Each shard's worker runs one job at startup, all in parallel (server/persistence/snapshot.h).
// The job walks the manifest's chain in order - the base, then each delta - over the
// files of every shard of the thread count that wrote it, and keeps the keys that hash
// to its own shard under the current thread count. When the thread count has not
// changed it reads only its own shard's files (the others cannot hold its keys).
// A delta first deletes, in each of its dirty ranges, the keys the writing shard owned,
// then applies its records, so base + deltas equals the data at the last cut.
// Expired keys are skipped; those that no later record of the chain brings back are
// told to the keyspace's event hook at the end (a master sends its replicas a DEL for
// each, since they still hold them). Any damage is an error naming the file and the offset; the
// caller refuses to start (or, when told to, starts empty) - never a partial load.
//
// Cold records (spilled values) load as cold entries. Under the thread count that wrote
// them, the shard's store was restored from its own checkpoint and they load as they
// are (AllowCold). Under another count (AllowColdResharded) each is loaded tagged with
// its old shard (ColdSources::TagSeq); when the chain is loaded, a last phase walks the
// shard's tables in slices and copies the records of the tagged entries left from the
// old stores into its own, under new numbers: so only the values of keys that survived
// the chain are copied, and a record missing from the old stores is damage.
//
// Thread-safety: owned by the shard's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/keyspace.h"
#include "storage/cold_sources.h"
#include "storage/cold_store.h"
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
  // Under another thread count: see above. target() is asked once, when the copy
  // starts (the shard's spill tier exists by then); take_seqs(n) returns the first of
  // n new record numbers of the shard's store.
  struct ColdTarget {
    ColdStore* store = nullptr;
    std::function<uint64_t(size_t n)> take_seqs;
  };
  void AllowColdResharded(ColdSources* sources, std::function<ColdTarget()> target);
  static constexpr size_t kRecordsPerCall = 32;
  static constexpr size_t kCopyBatch = 256;  // cold records copied per read and write

 private:
  struct Item {
    std::string path;
    uint32_t old_shard;
  };
  Status StepChain(int64_t budget_ns, int64_t now_ms, bool* done);
  Status OpenNext();
  // A key left out because its TTL had passed: told once the chain is loaded
  // (TellDropped), if no later record brought it back.
  void NoteDropped(uint32_t db, std::string_view key);
  void TellDropped();
  Status InsertCold(uint32_t db, ValueType type, std::string_view key, uint64_t seq,
                    const ColdRecord& c, int64_t expire_ms);
  // The resharded copy: one slice, until the deadline; *done when every table is walked.
  Status CopyColdStep(int64_t deadline_ns, bool* done);
  struct ToCopy {
    uint32_t db;
    std::string key;
    uint64_t tagged;
  };
  Status CopyCold(const std::vector<ToCopy>& batch);
  ColdSources* sources_ = nullptr;
  std::function<ColdTarget()> target_fn_;
  ColdTarget target_;
  bool copy_started_ = false;
  uint32_t copy_db_ = 0;
  uint64_t copy_cursor_ = 0;
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
  // Keys left out as expired, while a keyspace event hook listens (a master's replicas
  // must drop them too): at most one entry per expired record read.
  std::vector<std::pair<uint32_t, std::string>> dropped_;
  int64_t now_ms_ = 0;
};

}  // namespace strata
