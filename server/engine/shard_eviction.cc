#include "server/engine/shard_eviction.h"

#include <array>
#include <cmath>

#include "server/base/config.h"
#include "server/engine/engine.h"
#include "server/engine/worker.h"

namespace strata {

namespace {

// maxmemory-policy's enum index (Config::MaxmemoryPolicyNames order) to the policy.
EvictionPolicy PolicyAt(int64_t index) {
  static const std::array<EvictionPolicy, 8> table = [] {
    std::array<EvictionPolicy, 8> t{};
    const auto& names = Config::MaxmemoryPolicyNames();
    for (size_t i = 0; i < names.size() && i < t.size(); i++) {
      if (!ParseEvictionPolicy(names[i], &t[i])) t[i] = EvictionPolicy::kNoEviction;
    }
    return t;
  }();
  if (index < 0 || index >= static_cast<int64_t>(table.size())) return EvictionPolicy::kNoEviction;
  return table[static_cast<size_t>(index)];
}

}  // namespace

int64_t ShardEviction::BudgetUs(int64_t tenacity) {
  int64_t us;
  if (tenacity <= 10) {
    us = 50 * std::max<int64_t>(tenacity, 0);
  } else if (tenacity < 100) {
    us = static_cast<int64_t>(500.0 * std::pow(1.15, static_cast<double>(tenacity - 10)));
  } else {
    us = kTurnCapUs;
  }
  return std::min(us, kTurnCapUs);
}

uint64_t ShardEviction::config_generation() const { return worker_.engine().config().generation(); }

void ShardEviction::Refresh(int64_t now_ms) {
  // The settings and the clocks (one-second resolution) change rarely: they are re-read
  // when the config changed or a new second began.
  const Config& cfg = worker_.engine().config();
  next_refresh_ms_ = (now_ms / access::kLruResolutionMs + 1) * access::kLruResolutionMs;
  seen_generation_ = cfg.generation();
  EvictionPolicy p = PolicyAt(cfg.maxmemory_policy_index());
  if (p != policy_) {
    evictor_.Clear();  // scores of the old policy
    policy_ = p;
  }
  samples_ = static_cast<int>(std::min<int64_t>(cfg.maxmemory_samples(), INT32_MAX));
  replica_ignores_limit_ = cfg.Bool("replica-ignore-maxmemory");
  budget_us_ = BudgetUs(cfg.eviction_tenacity());
  keyspace_.SetAccessClock(
      access::Clock::At(now_ms, AccessModeFor(p), cfg.lfu_log_factor(), cfg.lfu_decay_time()));
}

size_t ShardEviction::OthersUsed() const {
  size_t mine = worker_.published_used_bytes() - worker_.published_lazy_bytes();
  size_t all = worker_.engine().UsedMemoryAfterLazyFree();
  return all > mine ? all - mine : 0;
}

size_t ShardEviction::ProcessUsed() const {
  size_t others = OthersUsed();
  return others + worker_.used_bytes() - worker_.keyspace().lazyfree_pending_bytes();
}

void ShardEviction::EvictForWrite(size_t request_bytes) {
  if (worker_.pause_gate()) return;  // a paused dataset stays as it is (as Redis)
  Evict(kWriteFreeFactor * request_bytes + kWriteFreeMinBytes, budget_us_);
}

void ShardEviction::Evict(size_t share, int64_t budget_us) {
  int64_t limit = worker_.engine().config().maxmemory().load(std::memory_order_relaxed);
  if (limit <= 0) return;
  Keyspace& ks = worker_.keyspace();
  // Others' figures as published; this shard's current one, less what lazy freeing
  // will return, is re-read after every key.
  size_t others = OthersUsed();
  int64_t start_us = WallClockUs();
  size_t freed_total = 0;
  int evicted = 0;
  while (freed_total < share) {
    size_t used = others + worker_.used_bytes() - ks.lazyfree_pending_bytes();
    if (used <= static_cast<size_t>(limit)) break;
    // The first kKeysPerClockCheck keys always go (as in Redis, even at tenacity 0).
    if (evicted > 0 && evicted % kKeysPerClockCheck == 0 && WallClockUs() - start_us >= budget_us) {
      break;
    }
    size_t freed = 0;
    Evictor::Result r = evictor_.EvictOne(ks, policy_, samples_, worker_.now_ms(), &freed);
    if (r == Evictor::Result::kNotFound) break;  // keys there, none met: next time
    if (r != Evictor::Result::kEvicted) {
      if (!exhausted_.load(std::memory_order_relaxed))
        exhausted_.store(true, std::memory_order_relaxed);
      break;
    }
    if (exhausted_.load(std::memory_order_relaxed))
      exhausted_.store(false, std::memory_order_relaxed);
    freed_total += freed;
    evicted++;
    // Shards evicting at the same time see each other's progress: a big key, or every
    // kKeysPerClockCheck keys, is published at once and the others' figures re-read.
    if (freed >= kPublishFreedBytes || evicted % kKeysPerClockCheck == 0) {
      worker_.PublishUsed();
      others = OthersUsed();
    }
  }
  if (evicted > 0) worker_.PublishUsed();
}

void ShardEviction::CatchUp() {
  if (worker_.pause_gate()) return;  // a paused dataset stays as it is (as Redis)
  int64_t limit = worker_.engine().config().maxmemory().load(std::memory_order_relaxed);
  size_t used = ProcessUsed();
  if (limit <= 0 || used <= static_cast<size_t>(limit)) return;
  size_t excess = used - static_cast<size_t>(limit);
  size_t mine = worker_.used_bytes();
  size_t pool = std::max(worker_.engine().EvictableUsedMemory(), mine);
  size_t share =
      pool == 0 ? excess
                : static_cast<size_t>(static_cast<unsigned __int128>(excess) * mine / pool) + 1;
  Evict(share, budget_us_);
}

}  // namespace strata
