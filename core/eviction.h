// Evictor: chooses and deletes keys of one shard's Keyspace under a maxmemory policy.
//
// The policies and their choice are Redis 7's:
//   allkeys-lru / volatile-lru     the key idle the longest (access state, access.h)
//   allkeys-lfu / volatile-lfu     the key with the lowest decayed frequency counter
//   volatile-ttl                   the key whose expiry is nearest
//   allkeys-random / volatile-random   any key
// volatile-* consider only keys with an expiry; noeviction never evicts.
//
// Sampling, as in Redis: each round takes maxmemory-samples keys from every database
// and merges them into a pool of the kPoolSize best candidates seen so far, kept across
// rounds. The key evicted is the pool's best that still exists (the pool holds copies
// of keys: one deleted since is skipped, and one sampled in an earlier round is scored
// again first, so a key read since is not evicted for an old score).
// A database is sampled by walking its table (Table::ScanChunk order) from a random
// place: table positions follow the key's hash, so consecutive keys are a random sample
// and one short walk yields them. Under volatile-* with few keys with a TTL (under one in
// kSparseTtlRatio), each round instead goes on from where the last one stopped, so that
// over rounds every key with a TTL is met. A round walks at most kChunksPerRound
// (kVolatileChunksPerRound) chunks, so it is bounded however sparse the table.
//
// Cost: a round is O(samples * databases with keys); evicting a key is one Delete
// (big collections are freed a slice at a time, Keyspace::LazyFreeStep). The caller
// bounds how many rounds run per loop turn.
//
// Thread-safety: one per shard, used by the shard's thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/access.h"

namespace strata {

class Keyspace;
class Entry;

enum class EvictionPolicy : uint8_t {
  kNoEviction,
  kAllKeysLru,
  kAllKeysLfu,
  kAllKeysRandom,
  kVolatileLru,
  kVolatileLfu,
  kVolatileRandom,
  kVolatileTtl,
};

// Parses Redis's policy names ("allkeys-lru", ...); false for anything else.
bool ParseEvictionPolicy(std::string_view name, EvictionPolicy* out);
const char* EvictionPolicyName(EvictionPolicy p);
inline bool IsVolatilePolicy(EvictionPolicy p) {
  return p == EvictionPolicy::kVolatileLru || p == EvictionPolicy::kVolatileLfu ||
         p == EvictionPolicy::kVolatileRandom || p == EvictionPolicy::kVolatileTtl;
}
inline bool IsLfuPolicy(EvictionPolicy p) {
  return p == EvictionPolicy::kAllKeysLfu || p == EvictionPolicy::kVolatileLfu;
}
// The meaning of the keys' access state under policy p.
inline access::Mode AccessModeFor(EvictionPolicy p) {
  return IsLfuPolicy(p) ? access::Mode::kLfu : access::Mode::kLru;
}

class Evictor {
 public:
  static constexpr size_t kPoolSize = 16;
  // A chunk is 1/256 of a table segment (Table::ScanChunk): a few slots.
  static constexpr int kChunksPerRound = 64;
  static constexpr int kVolatileChunksPerRound = 256;
  static constexpr size_t kSparseTtlRatio = 16;

  enum class Result {
    kEvicted,     // a key was deleted
    kNone,        // nothing this policy may evict (no keys, or none with an expiry)
    kNotFound,    // there are such keys, but these rounds met none (try again later)
    kNoEviction,  // the policy is noeviction
  };

  explicit Evictor(uint64_t seed = 0x2545F4914F6CDD1Dull) : rng_(seed | 1) {}

  // Deletes one key chosen by policy (sampling `samples` keys per database per round,
  // as many rounds as needed, at most kMaxRounds). *freed_bytes: the shard's
  // used_bytes() drop, counting bytes handed to lazy freeing as freed.
  Result EvictOne(Keyspace& ks, EvictionPolicy policy, int samples, int64_t now_ms,
                  size_t* freed_bytes);

  // Forgets the pooled candidates (after FLUSHALL or a policy change).
  void Clear() { pool_.clear(); }

  static constexpr int kMaxRounds = 16;
  static constexpr int kMaxVolatileRounds = 4;

 private:
  struct Candidate {
    uint64_t score;  // higher: evict first
    uint32_t db;
    std::string key;
    bool checked;  // scored in the current round (else re-scored before use)
  };
  // Eviction score of e under policy (higher goes first).
  static uint64_t Score(const Entry* e, EvictionPolicy policy, const access::Clock& clock);
  void Populate(Keyspace& ks, uint32_t db, EvictionPolicy policy, int samples);
  void Offer(uint64_t score, uint32_t db, std::string_view key, bool checked);
  Result EvictRandom(Keyspace& ks, EvictionPolicy policy, int64_t now_ms, size_t* freed);
  bool Remove(Keyspace& ks, uint32_t db, std::string_view key, size_t* freed);
  uint64_t Next() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }

  std::vector<Candidate> pool_;   // ascending score: the best candidate is last
  std::vector<uint64_t> cursor_;  // per database, where a sparse volatile walk goes on
  uint64_t rng_;
  uint32_t random_db_ = 0;
};

}  // namespace strata
