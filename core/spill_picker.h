// SpillPicker: chooses which hot values of one shard's Keyspace go to disk (the spill
// tier, docs/ARCHITECTURE.md "The tier").
//
// The choice uses the keys' access state, as eviction does (core/eviction.h): under an
// LFU policy the lowest decayed frequency counter, otherwise the longest idle time. A
// round samples each database with keys by walking its table (Table::ScanChunk order,
// which follows the key's hash, so consecutive keys are a random sample) on from where
// the last round stopped, takes the eligible entries it meets (hot, a value of at least
// min_value_bytes, not refused by the caller's filter), and returns the coldest half of
// them: over rounds the values spilled are the coldest the samples saw, as Redis's
// sampled LRU. Going on from the last place (rather than from a random one) matters
// once most values are cold: the few hot ones left are still met, every one within a
// sweep of the table. A round walks at most kChunksPerRound chunks per database, so it
// is bounded however few entries are eligible; exhausted() says that a whole sweep of
// every database found none.
//
// Entry pointers returned are valid until the next write to the shard's tables.
//
// Thread-safety: one per shard, used by the shard's thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/access.h"

namespace strata {

class Keyspace;
class Entry;

class SpillPicker {
 public:
  static constexpr int kChunksPerRound = 64;

  struct Pick {
    uint32_t db;
    Entry* entry;
  };
  // The bytes a hot entry's value holds in RAM (a collection's object included): what
  // spilling it would free, and what spill-min-value-size is compared with.
  static size_t ValueBytes(const Entry* e);

  explicit SpillPicker(uint64_t seed = 0x9E3779B97F4A7C15ull) : rng_(seed | 1) {}

  // One round: appends to *out the coldest half (at least one) of the eligible entries
  // met while sampling about `samples` of them per database. skip(db, e) true: not
  // eligible (already being written, waited for). Returns the entries appended.
  size_t Round(Keyspace& ks, size_t min_value_bytes, int samples,
               const std::function<bool(uint32_t, const Entry*)>& skip, std::vector<Pick>* out);
  // A whole sweep of every database with keys found nothing eligible (reset as soon as
  // a round finds something).
  bool exhausted() const { return exhausted_; }

 private:
  uint64_t Next() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }
  struct Scored {
    uint64_t score;  // higher: colder
    Pick pick;
  };
  struct Sweep {
    uint64_t cursor = 0;
    bool found = false;  // eligible entries met (or skipped) since the sweep began
    bool empty = false;  // the last whole sweep met none
  };
  std::vector<Scored> scratch_;
  std::vector<Sweep> sweeps_;  // per database
  bool exhausted_ = false;
  uint64_t rng_;
};

}  // namespace strata
