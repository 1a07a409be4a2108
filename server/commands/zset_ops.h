// Sorted-set operations on one shard, shared by the sorted-set commands, their
// cross-shard fibers and the blocking pops (server/engine/blocking.h).
//
// Owns nothing: each Op* leaves the keyspace consistent on return (an emptied sorted set
// is deleted, bytes are re-charged). A key of another type sets *wrong_type and changes
// nothing.
//
// Thread-safety: the thread of the shard owning the key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/keyspace.h"
#include "core/zset_type.h"

namespace strata {

using ZPopped = std::vector<std::pair<std::string, double>>;

// Pops up to count members from the low end (or the high end when max), in pop order.
// Empty when the key is absent.
ZPopped OpZPop(Keyspace& ks, uint32_t db, std::string_view key, bool max, size_t count,
               int64_t now_ms, bool* wrong_type);

// ZPOPMIN/ZPOPMAX's keyspace events after a pop from key (del when it emptied it).
void NotifyZPopped(Keyspace& ks, uint32_t db, std::string_view key, bool max, int64_t now_ms);

// Stores a *STORE command's result (StoreZSet) and publishes its event, `event` or del
// when an empty result removed the destination.
void StoreZSetAndNotify(Keyspace& ks, uint32_t db, std::string_view event, std::string_view key,
                        std::vector<ZMember>* items, int64_t now_ms);

// The number of members of a sorted-set key (0 when absent).
int64_t OpZCard(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms, bool* wrong_type);

}  // namespace strata
