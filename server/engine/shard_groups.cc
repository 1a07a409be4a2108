#include "server/engine/shard_groups.h"

#include <algorithm>
#include <unordered_set>

#include "core/hash.h"

namespace strata {

size_t ShardGroups::IndexOf(uint32_t shard) const {
  return static_cast<size_t>(std::lower_bound(shards.begin(), shards.end(), shard) -
                             shards.begin());
}

ShardGroups GroupByShard(const std::vector<std::string_view>& keys, uint32_t db,
                         uint32_t shard_count, bool exclusive, uint64_t owner) {
  // One pass to place each key, one per shard to build its lock request; a key given
  // several times is locked once (a set of lock keys, so the cost stays linear).
  std::vector<std::vector<size_t>> by_shard(shard_count);
  for (size_t i = 0; i < keys.size(); i++) by_shard[ShardOfKey(keys[i], shard_count)].push_back(i);
  ShardGroups g;
  std::unordered_set<LockTable::Key> seen;
  for (uint32_t shard = 0; shard < shard_count; shard++) {
    std::vector<size_t>& pos = by_shard[shard];
    if (pos.empty()) continue;
    g.shards.push_back(shard);
    LockTable::Request req;
    req.exclusive = exclusive;
    req.owner = owner;
    req.db = db;
    req.keys.reserve(pos.size());
    seen.clear();
    seen.reserve(pos.size());
    for (size_t p : pos) {
      LockTable::Key k = LockTable::LockKey(db, keys[p]);
      if (seen.insert(k).second) {
        req.keys.push_back(k);
        req.names.push_back(keys[p]);
      }
    }
    g.locks.push_back(std::move(req));
    g.positions.push_back(std::move(pos));
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
