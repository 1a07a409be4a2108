// Helpers shared by the command families: key lookups with type checks, expiry
// argument parsing, and the plumbing of multi-shard fibers.
// Thread-safety: shard helpers run on the shard's thread; fiber helpers on the
// client's thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/keyspace.h"
#include "server/command.h"
#include "server/lock_table.h"

namespace strata {

class Connection;

enum class ExpireUnit { kSeconds, kMilliseconds };

// Converts an expire argument to absolute unix ms, as Redis's getExpireMillisecondsOrReply:
// non-integer -> "value is not an integer..."; <= 0 or overflow -> "invalid expire time".
// On error writes the error to rb and returns false.
bool ParseExpireArg(std::string_view arg, ExpireUnit unit, bool absolute, int64_t now_ms,
                    std::string_view cmd, ReplyBuilder& rb, int64_t* out_ms);

// Looks key up for a command on values of `type`: *out is the entry or nullptr when
// absent; when the key holds another type, replies WRONGTYPE and returns false. `read`
// counts a keyspace hit or miss (commands that only read).
bool LookupTyped(ShardCtx& ctx, std::string_view key, ValueType type, ReplyBuilder& rb, Entry** out,
                 bool read = true);

// A blocking command's timeout, as Redis's getTimeoutFromObjectOrReply: seconds as a
// float, 0 = wait forever. On error writes it to rb and returns false.
bool ParseBlockingTimeout(std::string_view s, ReplyBuilder& rb, int64_t* ms);

// The keys of a multi-key command grouped by shard, with one lock request per shard.
struct ShardGroups {
  std::vector<uint32_t> shards;                // increasing
  std::vector<std::vector<size_t>> positions;  // per shard: indexes into keys
  std::vector<LockTable::Request> locks;       // per shard
  size_t IndexOf(uint32_t shard) const;
};

// Builds groups for keys in `db`; exclusive selects write locks.
ShardGroups GroupByShard(const std::vector<std::string_view>& keys, uint32_t db,
                         uint32_t shard_count, bool exclusive);

}  // namespace strata
