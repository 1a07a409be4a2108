// ShardTier: one shard's side of the spill tier (docs/ARCHITECTURE.md "The tier").
//
// What it owns: the shard's ColdStore (RocksDB under <spill-dir>/shard-<i>), its I/O
// thread (storage/cold_io.h), the commands held for cold values, and the spill state.
// It is the shard Keyspace's ColdHook and the worker's ColdGate.
//
// Going cold (OnTurn, once per loop turn, only while the process's used memory is over
// spill-high-watermark x maxmemory, until it is under spill-low-watermark): a few
// sampling rounds (core/spill_picker.h) choose the coldest hot values of at least
// spill-min-value-size bytes; each is serialized with a new sequence number into one
// write job of at most kSpillBatchBytes, submitted to the I/O thread. Bounded: at most
// MaxInflightBytes() of serialized values are in flight per shard (they count in
// used_memory), so memory falls only as fast as the disk takes it. When the job comes
// back written, each entry whose value is still the one serialized (compared byte for
// byte: a key written meanwhile stays hot, and its record is erased) becomes cold
// (Keyspace::MakeCold). A failed write changes nothing in RAM: the error is logged and
// counted, and spilling pauses for kErrorPauseMs. spill-max-disk-size stops spilling
// the same way (the store's live files are measured every kDiskPollMs).
//
// A cold read (MustWait/Hold, from the dispatcher before a command runs): a cold key's
// record is first looked for in the store's memtables and block cache
// (ColdStore::TryGetCached, no I/O); found, the value is put back in RAM at once and the
// command runs. Otherwise the record's number joins this turn's read job (one MultiGet
// on the I/O thread per turn) and the command is held. When the job comes back, each
// value whose key still holds the same cold entry (same sequence number) is put back in
// RAM (Keyspace::MakeHot); a key that was deleted, overwritten or expired meanwhile
// keeps what it is now, so a read never returns stale data and never resurrects a key.
// Then held commands run in the order they were held, a command waiting while an
// earlier held command names one of its keys; those whose read failed get an error.
// Room: a value read back stays in RAM only while used memory is under the low
// watermark. Otherwise its record is kept, the commands get the value, and then, if
// unchanged, it goes cold again under the same record (ReturnToDisk): a read never
// costs a write.
//
// Backpressure: CanFreeMemory() (any shard's tier can still spill) lets a write over
// maxmemory wait for the spill instead of being refused at once (Worker::spill_wait).
//
// Deleting: a cold entry freed by the keyspace (ColdFreed) adds an erase of its record
// to the next write job (one range deletion after a FLUSHALL). While a snapshot is
// being taken erases are held back (BeginSnapshot/EndSnapshot), so the snapshot's
// checkpoint of the store holds every record its cold entries name; while one loads,
// none are made (a delta's cold records name the base's records).
//
// Thread-safety: everything on the shard's worker thread, except the I/O thread's
// completion callback (which only queues the job and wakes the worker) and stats(),
// whose counters are relaxed atomics any thread may read.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/keyspace.h"
#include "core/spill_picker.h"
#include "server/engine/cold_gate.h"
#include "server/engine/task.h"
#include "storage/cold_io.h"
#include "storage/cold_store.h"
#include "storage/status.h"

namespace strata {

class Worker;

// The tier's counters (INFO tiered), one set per shard.
struct TierStats {
  std::atomic<uint64_t> spills{0};              // values made cold
  std::atomic<uint64_t> unspills{0};            // values brought back to RAM
  std::atomic<uint64_t> disk_reads{0};          // values read by the I/O thread
  std::atomic<uint64_t> disk_reads_per_sec{0};  // over the last second or so
  std::atomic<uint64_t> cache_hits{0};          // found in the store's cache without I/O
  std::atomic<uint64_t> cache_misses{0};        // needed the I/O thread
  std::atomic<uint64_t> bytes_written{0};       // serialized values written
  std::atomic<uint64_t> spill_discarded{0};     // written, but the key changed meanwhile
  std::atomic<uint64_t> spill_errors{0};        // failed write jobs
  std::atomic<uint64_t> read_errors{0};         // failed reads (the commands got errors)
  std::atomic<uint64_t> erases{0};              // records deleted
  std::atomic<uint64_t> pending_reads{0};       // records being read now
  std::atomic<uint64_t> pending_write_bytes{0};
  std::atomic<uint64_t> held_commands{0};
  std::atomic<uint64_t> disk_bytes{0};  // live SST and blob files (polled)
  std::atomic<uint64_t> compaction_bytes{0};
  std::atomic<uint64_t> compactions_running{0};
  std::atomic<uint64_t> compaction_pending_bytes{0};
  std::atomic<uint64_t> table_reader_bytes{0};
  std::atomic<uint64_t> memtable_bytes{0};
  std::atomic<uint64_t> dead_records{0};       // freed, not yet dropped from the files
  std::atomic<uint64_t> dead_record_bytes{0};  // the RAM their set takes
  std::atomic<uint64_t> dead_dropped{0};       // dropped by flushes and compactions
  std::atomic<uint64_t> gc_files{0};           // file rewrites asked for by GC
  std::atomic<uint64_t> orphans{0};            // records no entry named after a load
  std::atomic<uint64_t> cold_keys{0};
  std::atomic<uint64_t> cold_value_bytes{0};
  std::atomic<uint64_t> hot_keys{0};
  std::atomic<uint64_t> sync_reads{0};
  std::atomic<bool> spilling{false};
  std::atomic<bool> disk_limit_reached{false};
};

class ShardTier final : public ColdGate, public ColdHook {
 public:
  static constexpr size_t kSpillBatchBytes = 512 * 1024;
  static constexpr size_t kMaxInflightBytesCap = 4 * 1024 * 1024;
  static constexpr size_t kMinInflightBytes = 512 * 1024;
  static constexpr int kMaxRoundsPerTurn = 16;
  static constexpr int kSamplesPerRound = 32;
  static constexpr int64_t kErrorPauseMs = 5000;
  static constexpr int64_t kDiskPollMs = 100;
  // How often the store's files are checked for dead records (GC).
  static constexpr int64_t kGcIntervalMs = 1000;
  // Pending erases above this with no cold entry left become one range deletion.
  static constexpr size_t kRangeEraseMin = 1024;

  // The process-wide settings the tier reads (refreshed when the config changes).
  struct Settings {
    size_t high_bytes = 0;  // 0: never spill (no maxmemory)
    size_t low_bytes = 0;
    size_t min_value_bytes = 64;
    uint64_t max_disk_bytes = 0;    // 0: no limit
    double gc_dead_fraction = 0.4;  // spill-gc-dead-fraction
  };

  // Any thread (the main thread, before the workers start): opens a shard's store in
  // options.dir, empty, or restored from a snapshot's checkpoint (restore_from non-empty).
  static Status OpenStore(const ColdStoreOptions& options, const std::string& restore_from,
                          ColdCache* cache, std::unique_ptr<ColdStore>* out);
  // On the worker's thread, before it serves clients: takes the store, starts the I/O
  // thread and installs the keyspace hook and the worker's gate.
  // can_free_shards: the process's count of tiers that can still spill (shared by all).
  ShardTier(Worker& w, ColdCache* cache, uint32_t shard_count, std::unique_ptr<ColdStore> store,
            std::atomic<uint32_t>* can_free_shards);
  ~ShardTier() override;

  // ColdGate.
  bool MustWait(uint32_t db, const std::vector<std::string_view>& keys, bool need_values) override;
  void Hold(uint32_t db, const std::vector<std::string_view>& keys, HeldCommand cmd) override;
  // Memory is the process's: true while any shard's tier can still spill (over
  // maxmemory is over the high watermark, so the next turns spill where they can).
  bool CanFreeMemory() const override {
    return can_free_shards_->load(std::memory_order_relaxed) > 0;
  }
  // ColdHook.
  void ColdFreed(uint64_t seq) override;
  bool ReadColdNow(uint64_t seq, std::string* out) override;

  // Once per loop turn: spills if over the watermark, submits the turn's reads and
  // erases, refreshes the memory it charges and the counters.
  void OnTurn(const Settings& s, size_t process_used, int64_t now_ms);
  // True when a turn would do work now (the loop must not sleep).
  bool HasWork() const { return has_work_; }

  // Snapshots: from the cut until EndSnapshot, erases are held back; Checkpoint copies
  // the store into dir (on the I/O thread, after the writes submitted before it) and
  // calls done on this worker.
  void BeginSnapshot() { hold_erases_ = true; }
  void EndSnapshot();
  void Checkpoint(const std::string& dir, std::function<void(const Status&)> done);

  // n new record numbers, the first returned: for records a resharding load writes into
  // the store itself (storage/snapshot_loader.h).
  uint64_t TakeSeqs(size_t n) {
    uint64_t first = next_seq_;
    next_seq_ += n;
    return first;
  }

  const TierStats& stats() const { return stats_; }
  // The last error (disk write or read), "" when none. Any thread.
  std::string last_error() const;
  ColdStore* store() { return store_.get(); }

 private:
  struct Held {
    std::vector<std::string> ids;  // db-prefixed keys
    HeldCommand cmd;
  };
  struct SpillItem {
    uint32_t db;
    std::string key;
    const Entry* entry;  // as picked: only compared, never followed
  };
  static std::string Id(uint32_t db, std::string_view key);
  size_t MaxInflightBytes(const Settings& s) const;
  void Spill(const Settings& s, int64_t now_ms);
  void SubmitWrites(std::vector<ColdWrite> writes, std::vector<SpillItem> items, size_t bytes);
  void SubmitReads();
  void FlushErases();
  // I/O thread: queues a finished job and wakes the worker.
  void Completed(std::unique_ptr<ColdJob> job);
  // Worker: runs the finished jobs.
  static void DrainDone(void* self);
  void OnWritten(ColdJob& job);
  void OnRead(ColdJob& job);
  void RunReady();
  // Values read back while there was no room: after their commands ran, each unchanged
  // one goes cold again under its record, which was kept.
  void ReturnToDisk();
  struct Returning {
    uint32_t db;
    std::string key;
    uint64_t seq;
    std::string value;
  };
  std::vector<Returning> returning_;
  std::string serial_scratch_;                 // a value serialized to be compared (SerializedView)
  std::unordered_set<uint64_t> kept_records_;  // not erased by ColdFreed
  bool no_room_ = false;                       // over the high watermark last turn
  void SetError(const std::string& what);
  void RefreshCharges(int64_t now_ms);

  Worker& worker_;
  Keyspace& ks_;
  ColdCache* cache_;
  uint32_t shard_count_;
  std::unique_ptr<ColdStore> store_;
  std::unique_ptr<ColdIo> io_;
  SpillPicker picker_;
  uint64_t next_seq_ = 1;

  int64_t worker_now_ms() const;
  // Spilling.
  bool spilling_ = false;
  bool nothing_to_spill_ = false;  // the last rounds found no eligible value
  // Memtables: write jobs submitted, and how many of them the last finished flush
  // covered. When nothing is left to spill, a flush frees the memory they hold.
  uint64_t write_jobs_submitted_ = 0;
  uint64_t write_jobs_flushed_ = 0;
  bool flush_inflight_ = false;
  bool FlushIfNothingToSpill();
  // The cache probe before a cold read (see ShouldProbeCache).
  static constexpr uint32_t kProbeMinHitRatio = 8;
  static constexpr uint32_t kProbeSampleEvery = 16;
  static constexpr uint32_t kProbeWindow = 256;
  uint32_t probes_ = 0;
  uint32_t probe_hits_ = 0;
  uint32_t probes_skipped_ = 0;
  uint32_t fills_skipped_ = 0;
  bool CacheIsPaying() const;
  bool ShouldProbeCache();
  bool ProbeCache(uint64_t seq, std::string* value);
  // GC: every kGcIntervalMs while the store holds dead records.
  bool gc_inflight_ = false;
  int64_t gc_due_ms_ = 0;
  void MaybeCollectGarbage(const Settings& s, int64_t now_ms);
  // A restored store: once the load is over, records no cold entry names are dead.
  uint64_t orphan_sweep_max_seq_ = 0;  // 0: none to do
  void SweepOrphans();
  bool enabled_ = false;   // maxmemory is set (there is a watermark)
  bool can_free_ = false;  // counted in *can_free_shards_
  std::atomic<uint32_t>* can_free_shards_;
  void PublishCanFree();
  bool disk_full_ = false;
  int64_t paused_until_ms_ = 0;
  size_t inflight_write_bytes_ = 0;
  std::unordered_set<const Entry*> being_written_;
  std::unordered_map<uint64_t, std::vector<SpillItem>> write_jobs_;  // by job tag
  std::unordered_map<uint64_t, std::function<void(const Status&)>> checkpoint_jobs_;
  uint64_t next_tag_ = 1;
  std::vector<ColdWrite> erases_;
  std::vector<uint64_t> held_erases_;
  bool hold_erases_ = false;

  // Cold reads.
  std::unordered_map<std::string, uint64_t> reading_;  // id -> seq being read
  std::unordered_map<uint64_t, std::string> reading_ids_;
  std::vector<uint64_t> read_batch_;
  std::deque<Held> held_;
  std::unordered_map<std::string, uint32_t> held_refs_;  // id -> held commands naming it
  std::unordered_map<std::string, std::string> failed_;  // id -> error, until RunReady

  // Completions from the I/O thread.
  std::mutex done_mu_;
  std::vector<std::unique_ptr<ColdJob>> done_;
  bool done_posted_ = false;  // under done_mu_
  std::atomic<bool> closing_{false};

  bool has_work_ = false;
  int64_t charges_ms_ = -1;
  int64_t rate_ms_ = 0;  // when disk_reads_per_sec was last computed
  uint64_t rate_reads_ = 0;
  int64_t disk_poll_ms_ = 0;
  mutable std::mutex error_mu_;
  std::string last_error_;
  bool error_logged_ = false;
  TierStats stats_;
};

}  // namespace strata
