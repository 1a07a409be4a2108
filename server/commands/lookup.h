// Key lookups with the type check every typed command makes first.
// Thread-safety: the thread of the key's shard.
#pragma once

#include <string>
#include <string_view>

#include "core/keyspace.h"
#include "server/engine/command.h"

namespace strata {

// Looks key up for a command on values of `type`: *out is the entry or nullptr when
// absent; when the key holds another type, replies WRONGTYPE and returns false. `read`
// counts a keyspace hit or miss (commands that only read).
bool LookupTyped(ShardCtx& ctx, std::string_view key, ValueType type, ReplyBuilder& rb, Entry** out,
                 bool read = true);

// A string operand read for a command that uses it after its step on the shard (BITOP,
// LCS): the bytes copied, empty for an absent key, or wrong_type for another type.
struct StringOperand {
  bool wrong_type = false;
  std::string bytes;
  static StringOperand Read(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms);
};

// OBJECT ENCODING's name for the entry's value (its form, as Redis names it).
const char* EncodingOf(const Entry* e);

}  // namespace strata
