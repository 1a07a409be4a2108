// PlainCommands: a value written with the type's own commands instead of RESTORE - for
// a target that refuses the payload (an older Redis and a newer encoding) and for keys
// past --max-value-bytes, which go in chunks so that no command is bigger than a chunk:
// SET then APPEND, RPUSH, SADD, ZADD, HSET, each of at most `chunk_bytes` of arguments,
// then PEXPIREAT. A stream goes as Redis's AOF rewrite writes one: XADD per entry,
// XSETID, XGROUP CREATE, XCLAIM ... JUSTID FORCE per pending entry and XGROUP
// CREATECONSUMER (see StreamCommands in the .cc for what cannot be carried over).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/strata-dump/item.h"

namespace strata::dump {

using Command = std::vector<std::string>;

// The commands that write item's value to key (after a DEL when replace). False with
// *error when the payload does not decode or the type has no plain form.
bool PlainCommands(const Item& item, bool replace, size_t chunk_bytes, std::vector<Command>* out,
                   std::string* error);

}  // namespace strata::dump
