#include "server/engine/shard_groups.h"

#include <algorithm>
#include <vector>

#include "core/hash.h"
#include "core/keyspace.h"

namespace strata {

void PrefetchGroupRun(const Keyspace& ks, uint32_t db, const std::vector<std::string_view>& keys,
                      const std::vector<size_t>& positions, size_t j) {
  std::string_view run[Table::kLookaheadMax];
  size_t m = std::min(Table::kLookaheadMax, positions.size() - j);
  for (size_t t = 0; t < m; t++) run[t] = keys[positions[j + t]];
  ks.PrefetchKeys(db, run, m);
}

namespace {

// The lock keys a group has taken already: open addressing over a power-of-two table.
// Groups of up to kReusedMaxKeys use one table per thread, reused from call to call (a
// generation stamp tells this group's entries from older ones), so a big group costs no
// allocation once it has grown; a bigger group gets a table of its own, freed after.
class SeenKeys {
 public:
  static constexpr size_t kReusedMaxKeys = 4096;
  explicit SeenKeys(size_t n) : slots_(n <= kReusedMaxKeys ? reused_ : own_) {
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    if (slots_.size() < cap) {
      slots_.assign(cap, Slot{});
      gen_ = 0;
    }
    if (&slots_ == &reused_) {
      if (++reused_gen_ == 0) {  // wrapped: forget every stamp
        for (Slot& slot : slots_) slot.gen = 0;
        reused_gen_ = 1;
      }
      gen_ = reused_gen_;
    } else {
      gen_ = 1;
    }
    mask_ = slots_.size() - 1;
  }
  // True when k was not in the set (it is now).
  bool Insert(uint64_t k) {
    size_t i = static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
    while (slots_[i].gen == gen_) {
      if (slots_[i].key == k) return false;
      i = (i + 1) & mask_;
    }
    slots_[i] = Slot{k, gen_};
    return true;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t gen = 0;
  };
  static thread_local std::vector<Slot> reused_;
  static thread_local uint32_t reused_gen_;
  std::vector<Slot> own_;
  std::vector<Slot>& slots_;
  uint32_t gen_ = 0;
  size_t mask_ = 0;
};

thread_local std::vector<SeenKeys::Slot> SeenKeys::reused_;
thread_local uint32_t SeenKeys::reused_gen_ = 0;

}  // namespace

size_t ShardGroups::IndexOf(uint32_t shard) const {
  return static_cast<size_t>(std::lower_bound(shards.begin(), shards.end(), shard) -
                             shards.begin());
}

ShardGroups GroupByShard(const std::vector<std::string_view>& keys, uint32_t db,
                         uint32_t shard_count, bool exclusive, uint64_t owner) {
  // One pass to place each key and count the shards' keys, one to fill each group at
  // its final size; a key given several times is locked once. Every vector is sized
  // before it is filled, so a command of a few keys costs a few allocations.
  std::vector<uint32_t> shard_of(keys.size());
  std::vector<uint32_t> count(shard_count, 0);
  for (size_t i = 0; i < keys.size(); i++) {
    shard_of[i] = ShardOfKey(keys[i], shard_count);
    count[shard_of[i]]++;
  }
  size_t groups = 0;
  for (uint32_t c : count) groups += c > 0 ? 1 : 0;
  ShardGroups g;
  g.shards.reserve(groups);
  g.positions.resize(groups);
  g.locks.resize(groups);
  // The group of each shard, in increasing shard order (count[] is reused for it).
  for (uint32_t shard = 0; shard < shard_count; shard++) {
    if (count[shard] == 0) continue;
    size_t at = g.shards.size();
    g.positions[at].reserve(count[shard]);
    LockTable::Request& req = g.locks[at];
    req.exclusive = exclusive;
    req.owner = owner;
    req.db = db;
    req.keys.reserve(count[shard]);
    req.names.reserve(count[shard]);
    g.shards.push_back(shard);
    count[shard] = static_cast<uint32_t>(at);
  }
  for (size_t i = 0; i < keys.size(); i++) g.positions[count[shard_of[i]]].push_back(i);
  // Each lock key once: by a scan of the few already taken when a group is small, by a
  // table otherwise (SeenKeys; linear in the group either way).
  constexpr size_t kScanDedupMax = 16;
  for (size_t at = 0; at < groups; at++) {
    LockTable::Request& req = g.locks[at];
    const std::vector<size_t>& pos = g.positions[at];
    if (pos.size() <= kScanDedupMax) {
      for (size_t p : pos) {
        LockTable::Key k = LockTable::LockKey(db, keys[p]);
        if (std::find(req.keys.begin(), req.keys.end(), k) != req.keys.end()) continue;
        req.keys.push_back(k);
        req.names.push_back(keys[p]);
      }
      continue;
    }
    SeenKeys seen(pos.size());
    for (size_t p : pos) {
      LockTable::Key k = LockTable::LockKey(db, keys[p]);
      if (!seen.Insert(k)) continue;
      req.keys.push_back(k);
      req.names.push_back(keys[p]);
    }
  }
  return g;
}

std::vector<LockTable::Request> WholeShardRequests(uint32_t shard_count, uint64_t owner) {
  std::vector<LockTable::Request> out(shard_count);
  for (LockTable::Request& r : out) {
    r.whole = true;
    r.owner = owner;
  }
  return out;
}

}  // namespace strata
