// TierService: the spill tier of the whole process (docs/ARCHITECTURE.md "The tier"),
// an engine service present when spill-dir is set.
//
// It owns the ColdCache every shard's store charges (spill-cache-size: block cache,
// index and filter blocks and memtables in one budget), one ShardTier per worker
// (server/persistence/shard_tier.h), and the settings they read. Stores are opened on
// the main thread before the workers start (Prepare: a directory that cannot be used
// stops the server with its name), restored from the snapshot's checkpoints when the
// snapshot being loaded has them; each worker then takes its shard's store.
//
// Thread-safety: Prepare() and SetRestore() on the main thread before the workers
// start; the ShardService hooks on each worker's own thread; AppendInfo() and the
// accessors from any thread (counters are atomics).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/engine/engine.h"
#include "server/persistence/shard_tier.h"
#include "storage/cold_sources.h"
#include "storage/cold_store.h"
#include "storage/status.h"

namespace strata {

class TierService final : public ShardService {
 public:
  static constexpr size_t kMinCacheBytes = 4 * 1024 * 1024;

  explicit TierService(Engine* engine);
  ~TierService() override;

  // The live store of shard i: <spill-dir>/shard-<i>.
  std::string LiveDir(uint32_t shard) const;
  // Main thread: the snapshot's checkpoints, one per shard of the thread count that
  // wrote it ("" = none). Under that count each shard's store starts from its own;
  // under another, the stores start empty and the checkpoints are opened as sources
  // for the load to copy from (storage/cold_sources.h).
  void SetRestore(std::vector<std::string> dirs) { restore_ = std::move(dirs); }
  // The sources of a resharding load (null when the counts agree or nothing is spilled).
  ColdSources* reshard_sources() const { return sources_.get(); }
  // Once every shard has loaded: closes the sources and removes their directories.
  void ReleaseReshardSources() { sources_.reset(); }
  // Main thread, before the workers start: creates spill-dir and opens every store.
  Status Prepare();

  void OnWorkerStart(Worker& w) override;
  bool HasWork(const Worker& w) const override;
  void OnWorkerTurn(Worker& w, int64_t turn_ns, bool busy) override;

  // The shard's tier (null before its worker started).
  ShardTier* tier(uint32_t shard) const { return tiers_[shard].get(); }
  uint32_t shard_count() const { return static_cast<uint32_t>(tiers_.size()); }
  // Bytes the process's cache holds (counted in used_memory through the workers).
  size_t CacheBytes() const { return cache_ ? cache_->UsageBytes() : 0; }
  size_t CacheCapacity() const { return cache_ ? cache_->capacity_bytes() : 0; }
  // Bytes of RSS outside used_memory beyond the fixed part, counted by the tiers.
  uint64_t rss_growth() const { return rss_growth_.load(std::memory_order_relaxed); }
  // INFO tiered, after its title.
  void AppendInfo(std::string* out) const;
  // Destroys the tiers (after the workers stopped, before the engine goes).
  void Close();

 private:
  struct PerWorker {
    uint64_t generation = UINT64_MAX;
    ShardTier::Settings settings;
  };
  ShardTier::Settings ReadSettings() const;
  // Memory outside used_memory. RSS is used_memory plus the mapped code plus what the
  // allocator and RocksDB hold outside the counted allocations; that last part grows
  // with the threads and stores (each thread's partly used allocator pages, each
  // store's own structures). Worker 0 reads the process's anonymous RSS every
  // kRssProbeMs and publishes how far its excess over used_memory has grown above the
  // smallest excess seen (the fixed part, present from the start); the shards' tiers
  // count that growth as used memory when they decide to spill, so RSS stays near
  // maxmemory whatever the thread count. Writes are still refused by used_memory alone.
  static constexpr int64_t kRssProbeMs = 100;
  void ProbeRss(size_t used, int64_t now_ms);
  std::atomic<uint64_t> rss_growth_{0};
  uint64_t min_rss_gap_ = UINT64_MAX;  // worker 0 only
  int64_t rss_probe_due_ms_ = 0;       // worker 0 only
  int statm_fd_ = -1;                  // /proc/self/statm, opened by worker 0

  Engine* engine_;
  std::string dir_;
  std::unique_ptr<ColdCache> cache_;
  std::vector<std::string> restore_;
  std::unique_ptr<ColdSources> sources_;
  std::vector<std::unique_ptr<ColdStore>> stores_;  // until each worker takes its own
  std::vector<std::unique_ptr<ShardTier>> tiers_;
  std::vector<PerWorker> per_worker_;
  std::atomic<uint32_t> can_free_shards_{0};
  int64_t start_ms_ = 0;
};

// INFO tiered when spill is off.
void AppendTierOffInfo(std::string* out);

}  // namespace strata
