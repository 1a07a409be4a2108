// ColdSources: the spill stores of a snapshot written by another thread count, opened
// to copy their records into this run's stores while the snapshot loads
// (docs/ARCHITECTURE.md "The tier", "Snapshots").
//
// A snapshot's cold records name records in the store of the shard that wrote them.
// When the thread count is the one that wrote the snapshot, each shard's store is
// restored from its own checkpoint and the cold records load as they are. With another
// count a key may belong to another shard now, whose store does not hold its record.
// Then every shard's store starts empty, and each old checkpoint is restored (hard
// links, as for a same-count load) into a work directory and opened here. The load job
// marks each cold entry it inserts with the old shard it came from (TagSeq); once the
// whole chain is loaded, only the entries that survived it are copied: read here,
// written to the shard's own store under new numbers, and their locators changed
// (storage/snapshot_loader.h). Records of keys that a later link replaced are never
// read. When every shard has loaded, the sources are closed and their work
// directories removed (the snapshot's own checkpoints are never changed).
//
// Thread-safety: Open on one thread before the loads start; Read from any shard's
// worker at once (RocksDB reads are thread-safe); destroyed after every load is done.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/cold_store.h"
#include "storage/status.h"

namespace strata {

class ColdSources {
 public:
  // Tagged numbers: the old shard + 1 in the top byte, the old record below. Record
  // numbers are counters from 1 and stay far below 2^56.
  static constexpr int kTagShift = 56;
  static uint64_t TagSeq(uint32_t old_shard, uint64_t seq) {
    return (uint64_t{old_shard} + 1) << kTagShift | seq;
  }
  static bool IsTagged(uint64_t seq) { return (seq >> kTagShift) != 0; }
  static uint32_t TagShard(uint64_t seq) { return static_cast<uint32_t>(seq >> kTagShift) - 1; }
  static uint64_t TagRecord(uint64_t seq) { return seq & ((uint64_t{1} << kTagShift) - 1); }

  // checkpoints[i]: old shard i's checkpoint ("" when it had no cold records). Each is
  // restored into <work_root>/reshard-<i> and opened with `options` (its dir replaced),
  // charging `cache`, which must outlive this object.
  static Status Open(const std::vector<std::string>& checkpoints, const std::string& work_root,
                     const ColdStoreOptions& options, ColdCache* cache,
                     std::unique_ptr<ColdSources>* out);
  // Removes the work directories a run that stopped during its load left in work_root.
  static void RemoveStale(const std::string& work_root);
  ~ColdSources();
  ColdSources(const ColdSources&) = delete;
  ColdSources& operator=(const ColdSources&) = delete;

  uint32_t count() const { return static_cast<uint32_t>(stores_.size()); }
  // Reads old shard `source`'s records `seqs` (untagged); (*out)[i] is empty for one
  // that is missing. A source that had no checkpoint, or a read that fails, is an
  // error naming the checkpoint.
  Status Read(uint32_t source, const std::vector<uint64_t>& seqs,
              std::vector<std::optional<std::string>>* out);

 private:
  ColdSources() = default;
  std::vector<std::string> checkpoints_;
  std::vector<std::string> dirs_;
  std::vector<std::unique_ptr<ColdStore>> stores_;  // null: no checkpoint
};

}  // namespace strata
