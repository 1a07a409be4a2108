#include "server/engine/shard_groups.h"

#include <algorithm>
#include <map>
#include <string>

#include "core/hash.h"

namespace strata {

size_t ShardGroups::IndexOf(uint32_t shard) const {
  return static_cast<size_t>(std::lower_bound(shards.begin(), shards.end(), shard) -
                             shards.begin());
}

ShardGroups GroupByShard(const std::vector<std::string_view>& keys, uint32_t db,
                         uint32_t shard_count, bool exclusive) {
  std::map<uint32_t, std::vector<size_t>> by_shard;
  for (size_t i = 0; i < keys.size(); i++) by_shard[ShardOfKey(keys[i], shard_count)].push_back(i);
  ShardGroups g;
  for (auto& [shard, pos] : by_shard) {
    g.shards.push_back(shard);
    LockTable::Request req;
    req.exclusive = exclusive;
    for (size_t p : pos) {
      std::string k = LockTable::LockKey(db, keys[p]);
      if (std::find(req.keys.begin(), req.keys.end(), k) == req.keys.end())
        req.keys.push_back(std::move(k));
    }
    g.locks.push_back(std::move(req));
    g.positions.push_back(std::move(pos));
  }
  return g;
}

}  // namespace strata
