// ShardGroups: the keys of a multi-key command grouped by the shard that owns them, with
// the intent-lock request each shard needs (lock_table.h). A fiber that spans shards
// takes the locks on all shards at once when each can grant them at once, else in
// increasing shard order (try_lock_all.h), then hops (hops.h) to each group.
// Thread-safety: built and used on the fiber's own worker thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "server/engine/lock_table.h"

namespace strata {

// The keys of a multi-key command grouped by shard, with one lock request per shard.
struct ShardGroups {
  std::vector<uint32_t> shards;                // increasing
  std::vector<std::vector<size_t>> positions;  // per shard: indexes into keys
  std::vector<LockTable::Request> locks;       // per shard
  size_t IndexOf(uint32_t shard) const;
};

// Builds groups for keys in `db`; exclusive selects write locks. owner: the calling
// client's Client::txn_owner (inside EXEC, the transaction's locks are its own).
ShardGroups GroupByShard(const std::vector<std::string_view>& keys, uint32_t db,
                         uint32_t shard_count, bool exclusive, uint64_t owner);

class Keyspace;

// A group's keys looked up one after another on its shard (a fiber's step): prefetches
// the lookups of keys[positions[j ...]], the next Table::kLookaheadMax of them, together
// (Keyspace::PrefetchKeys), so that their cache misses overlap.
void PrefetchGroupRun(const Keyspace& ks, uint32_t db, const std::vector<std::string_view>& keys,
                      const std::vector<size_t>& positions, size_t j);

// One whole-shard request per shard, 0..shard_count-1 (lock_table.h): taken in that
// order, they hold the whole keyspace (FLUSHDB, DBSIZE, KEYS...), and no transaction or
// multi-key command is half applied while they are held.
std::vector<LockTable::Request> WholeShardRequests(uint32_t shard_count, uint64_t owner);

}  // namespace strata
