#include "core/eviction.h"

#include <algorithm>
#include <utility>

#include "core/keyspace.h"
#include "core/string_util.h"
#include "core/table.h"

namespace strata {

namespace {

struct PolicyName {
  EvictionPolicy policy;
  const char* name;
};
constexpr PolicyName kPolicyNames[] = {
    {EvictionPolicy::kNoEviction, "noeviction"},
    {EvictionPolicy::kAllKeysLru, "allkeys-lru"},
    {EvictionPolicy::kAllKeysLfu, "allkeys-lfu"},
    {EvictionPolicy::kAllKeysRandom, "allkeys-random"},
    {EvictionPolicy::kVolatileLru, "volatile-lru"},
    {EvictionPolicy::kVolatileLfu, "volatile-lfu"},
    {EvictionPolicy::kVolatileRandom, "volatile-random"},
    {EvictionPolicy::kVolatileTtl, "volatile-ttl"},
};

}  // namespace

bool ParseEvictionPolicy(std::string_view name, EvictionPolicy* out) {
  for (const PolicyName& p : kPolicyNames) {
    if (EqualsIgnoreCase(name, p.name)) {
      *out = p.policy;
      return true;
    }
  }
  return false;
}

const char* EvictionPolicyName(EvictionPolicy p) {
  for (const PolicyName& n : kPolicyNames) {
    if (n.policy == p) return n.name;
  }
  return "noeviction";
}

uint64_t Evictor::Score(const Entry* e, EvictionPolicy policy, const access::Clock& clock) {
  switch (policy) {
    case EvictionPolicy::kVolatileTtl:
      return UINT64_MAX - static_cast<uint64_t>(e->ExpireMs());
    case EvictionPolicy::kAllKeysLfu:
    case EvictionPolicy::kVolatileLfu:
      if (!e->HasAccess()) return 255;
      return 255 - access::LfuDecayed(e->Access(), clock.lfu_minutes, clock.lfu_decay_time);
    default:
      if (!e->HasAccess()) return UINT64_MAX;
      return access::LruIdleMs(clock.lru_clock, e->Access());
  }
}

void Evictor::Offer(uint64_t score, uint32_t db, std::string_view key, bool checked) {
  for (size_t i = 0; i < pool_.size(); i++) {
    if (pool_[i].db == db && pool_[i].key == key) {
      pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(i));  // re-placed below
      break;
    }
  }
  if (pool_.size() >= kPoolSize && score <= pool_.front().score) return;
  // Before candidates of equal score: among ties, the one sampled first goes first.
  auto it = std::lower_bound(pool_.begin(), pool_.end(), score,
                             [](const Candidate& c, uint64_t s) { return c.score < s; });
  Candidate c{score, db, std::string(key), checked};
  if (pool_.size() >= kPoolSize) {
    // Drop the worst (front) to make room; `it` shifts down by one.
    size_t at = static_cast<size_t>(it - pool_.begin());
    pool_.erase(pool_.begin());
    pool_.insert(pool_.begin() + static_cast<std::ptrdiff_t>(at - 1), std::move(c));
  } else {
    pool_.insert(it, std::move(c));
  }
}

void Evictor::Populate(Keyspace& ks, uint32_t db, EvictionPolicy policy, int samples) {
  bool vol = IsVolatilePolicy(policy);
  const access::Clock& clock = ks.access_clock();
  if (cursor_.size() < ks.db_count()) cursor_.resize(ks.db_count(), 0);
  uint32_t n = static_cast<uint32_t>(std::max(samples, 1));
  uint32_t taken = 0;
  int chunks = vol ? kVolatileChunksPerRound : kChunksPerRound;
  Table& t = ks.table(db);
  uint64_t& cursor = cursor_[db];
  // From a random place, as Redis samples; but where keys with a TTL are sparse, on
  // from where the last round stopped, so that over rounds every one of them is met.
  bool sparse = vol && ks.ExpiresCount(db) * kSparseTtlRatio < ks.DbSize(db);
  if (!sparse) cursor = Next() & (Table::kCursorEnd - 1);
  for (int i = 0; i < chunks && taken < n; i++) {
    cursor = t.ScanChunk(cursor, [&](Entry* e) {
      if (taken >= n || (vol && !e->HasExpire())) return false;
      Offer(Score(e, policy, clock), db, e->Key(), true);
      taken++;
      return false;  // never removes
    });
  }
}

bool Evictor::Remove(Keyspace& ks, uint32_t db, std::string_view key, size_t* freed) {
  size_t before = ks.used_bytes() - ks.lazyfree_pending_bytes();
  if (!ks.Delete(db, key, /*lazy=*/true)) return false;
  size_t after = ks.used_bytes() - ks.lazyfree_pending_bytes();
  *freed = before > after ? before - after : 0;
  ks.stats().evicted_keys++;
  ks.ReportEvicted(db, key);
  return true;
}

Evictor::Result Evictor::EvictRandom(Keyspace& ks, EvictionPolicy policy, int64_t now_ms,
                                     size_t* freed) {
  bool vol = policy == EvictionPolicy::kVolatileRandom;
  uint32_t dbs = ks.db_count();
  if (cursor_.size() < dbs) cursor_.resize(dbs, 0);
  bool any = false;
  for (uint32_t i = 0; i < dbs; i++) {
    uint32_t db = (random_db_ + i) % dbs;
    if ((vol ? ks.ExpiresCount(db) : ks.DbSize(db)) == 0) continue;
    any = true;
    // Start the walk at a random place in hash space, so the victim is any key.
    Table& t = ks.table(db);
    uint64_t cursor = Next() & (Table::kCursorEnd - 1);
    std::string key;
    bool found = false;
    int chunks = vol ? kVolatileChunksPerRound : kChunksPerRound;
    for (int c = 0; c < chunks && !found; c++) {
      cursor = t.ScanChunk(cursor, [&](Entry* e) {
        if (found || (vol && !e->HasExpire())) return false;
        key.assign(e->Key());
        found = true;
        return false;
      });
    }
    if (!found || ks.FindNoTouch(db, key, now_ms) == nullptr) continue;  // expired: gone
    random_db_ = (db + 1) % dbs;
    if (Remove(ks, db, key, freed)) return Result::kEvicted;
  }
  return any ? Result::kNotFound : Result::kNone;
}

Evictor::Result Evictor::EvictOne(Keyspace& ks, EvictionPolicy policy, int samples, int64_t now_ms,
                                  size_t* freed_bytes) {
  *freed_bytes = 0;
  if (policy == EvictionPolicy::kNoEviction) return Result::kNoEviction;
  if (policy == EvictionPolicy::kAllKeysRandom || policy == EvictionPolicy::kVolatileRandom)
    return EvictRandom(ks, policy, now_ms, freed_bytes);
  bool vol = IsVolatilePolicy(policy);
  const access::Clock& clock = ks.access_clock();
  // A volatile round may walk far to find keys with a TTL: fewer of them per call (the
  // cursor keeps its place, so the next call goes on from there).
  int rounds = vol ? kMaxVolatileRounds : kMaxRounds;
  for (int round = 0; round < rounds; round++) {
    bool any = false;
    for (uint32_t db = 0; db < ks.db_count(); db++) {
      if ((vol ? ks.ExpiresCount(db) : ks.DbSize(db)) == 0) continue;
      any = true;
      Populate(ks, db, policy, samples);
    }
    if (!any) {
      pool_.clear();
      return Result::kNone;
    }
    while (!pool_.empty()) {
      Candidate c = std::move(pool_.back());
      pool_.pop_back();
      Entry* e = ks.FindNoTouch(c.db, c.key, now_ms);
      if (e == nullptr || (vol && !e->HasExpire())) continue;  // gone or changed since
      if (!c.checked) {
        // Sampled in an earlier round: the key may have been read since. Score it again
        // and evict it only if it is still the best.
        uint64_t now_score = Score(e, policy, clock);
        if (!pool_.empty() && now_score < pool_.back().score) {
          Offer(now_score, c.db, c.key, true);
          continue;
        }
      }
      if (Remove(ks, c.db, c.key, freed_bytes)) {
        // Candidates left over are re-scored before they are used.
        for (Candidate& left : pool_) left.checked = false;
        return Result::kEvicted;
      }
    }
  }
  return Result::kNotFound;
}

}  // namespace strata
