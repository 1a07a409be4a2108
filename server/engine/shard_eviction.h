// ShardEviction: one worker's side of maxmemory eviction (docs/ARCHITECTURE.md
// "Eviction").
//
// The budget is the process's: every worker publishes its used bytes each loop turn
// (Worker::UpdateMemoryState) and the sum is compared with maxmemory. While the sum is
// over and the policy evicts, this shard deletes keys of its own (core/eviction.h) in
// two places:
//   - before a command that adds data runs here (BeforeWrite), as Redis evicts before
//     each command: a skewed shard, the one receiving the writes, evicts from itself
//     first. A write frees up to twice its own request's bytes (kWriteFreeFactor), so
//     the work is proportional to the write and memory falls while writes continue;
//   - once per loop turn (OnTurn), its share of the excess: the excess times its part
//     of the used bytes of the shards that still have something to evict, so memory
//     written through a shard that has nothing left to evict is freed elsewhere.
// No shard evicts while the process is under its limit, nor while clients are paused
// (CLIENT PAUSE, a failover's pause): as Redis, a paused dataset stays as it is, and the
// turns after the pause catch up.
//
// Bounded work: the catch-up on each turn, and each write's own eviction, stop after
// Redis's tenacity time (maxmemory-eviction-tenacity) capped at kTurnCapUs; the clock
// is read every kKeysPerClockCheck keys. A write whose eviction stops early goes ahead
// over the limit and the next turns catch up, so neither a burst of writes nor a
// lowered limit stalls a shard for long.
//
// OOM: under an evicting policy a write is refused with Redis's OOM error only when
// every shard has reported that it has nothing it may evict (no keys, or under
// volatile-* no keys with an expiry); see Engine::EvictionExhausted.
//
// Thread-safety: owned by its worker; only that thread calls it. exhausted() is read by
// every worker.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/eviction.h"
#include "core/keyspace.h"

namespace strata {

class Worker;

class ShardEviction {
 public:
  static constexpr int64_t kTurnCapUs = 1000;
  static constexpr int kKeysPerClockCheck = 16;
  static constexpr size_t kWriteFreeFactor = 2;
  static constexpr size_t kWriteFreeMinBytes = 512;
  // A key freeing at least this much is published before the next is chosen.
  static constexpr size_t kPublishFreedBytes = 64 * 1024;

  ShardEviction(Worker& w, Keyspace& ks) : worker_(w), keyspace_(ks) {}

  // Start of a loop turn: when the config changed or a second passed, re-reads the
  // settings and sets the keyspace's access clock.
  void StartTurn(int64_t now_ms) {
    if (now_ms < next_refresh_ms_ && config_generation() == seen_generation_) return;
    Refresh(now_ms);
  }
  // From Worker::UpdateMemoryState: whether the process is over maxmemory now.
  void SetOver(bool over) {
    active_ = over && policy_ != EvictionPolicy::kNoEviction;
    if (!active_ && exhausted_.load(std::memory_order_relaxed)) [[unlikely]]
      exhausted_.store(false, std::memory_order_relaxed);
  }
  // Before a command flagged denyoom runs on this shard while active(), with its
  // arguments (callers test active() first: one load on the path of every command).
  template <class Args>
  void BeforeWrite(const Args& args) {
    size_t bytes = 0;
    for (const auto& a : args) bytes += a.size();
    EvictForWrite(bytes);
  }
  // End of a loop turn, after publishing: evicts this shard's share of the excess.
  void OnTurn() {
    if (active_) [[unlikely]]
      CatchUp();
  }

  // replica-ignore-maxmemory as of the last refresh: on a replica, maxmemory is then not
  // this shard's to enforce (Worker::UpdateMemoryState).
  bool replica_ignores_limit() const { return replica_ignores_limit_; }
  bool active() const { return active_; }
  EvictionPolicy policy() const { return policy_; }
  bool exhausted() const { return exhausted_.load(std::memory_order_relaxed); }
  // Redis's evictionTimeLimitUs for a tenacity, capped at kTurnCapUs.
  static int64_t BudgetUs(int64_t tenacity);

 private:
  void EvictForWrite(size_t request_bytes);
  void Refresh(int64_t now_ms);
  void CatchUp();
  uint64_t config_generation() const;
  // Evicts until the process is under the limit, `share` bytes are freed or budget_us
  // have passed (the clock read every kKeysPerClockCheck keys).
  void Evict(size_t share, int64_t budget_us);
  // The process's used bytes with this worker's current figure (others as published).
  size_t ProcessUsed() const;
  // The other workers' used bytes as published, less their pending lazy frees.
  size_t OthersUsed() const;

  Worker& worker_;
  Keyspace& keyspace_;
  Evictor evictor_;
  EvictionPolicy policy_ = EvictionPolicy::kNoEviction;
  bool active_ = false;  // over maxmemory with an evicting policy
  std::atomic<bool> exhausted_{false};
  bool replica_ignores_limit_ = true;
  int samples_ = 5;
  int64_t budget_us_ = 0;        // per write, and per turn for the catch-up
  int64_t next_refresh_ms_ = 0;  // the next second's start
  uint64_t seen_generation_ = UINT64_MAX;
};

}  // namespace strata
