// What the stream command files share (stream_family.cc, stream_read.cc,
// stream_info.cc): the typed lookup, ID parsing with Redis's errors, and the reply
// shapes of IDs and entries.
// Thread-safety: call on the shard that owns the key.
#pragma once

#include <string>
#include <string_view>

#include "core/stream_type.h"
#include "server/engine/command.h"

namespace strata {

inline constexpr std::string_view kInvalidStreamId =
    "ERR Invalid stream ID specified as stream command argument";

// Looks a stream key up (for reading or writing); replies WRONGTYPE and returns false for
// a key of another type. *s is null when the key is missing.
bool LookupStream(ShardCtx& ctx, std::string_view key, ReplyBuilder& rb, bool read, Entry** e,
                  StreamObject** s);
void ReplyStreamId(ReplyBuilder& rb, StreamId id);
// [id, [field, value, ...]]
void ReplyStreamEntry(ReplyBuilder& rb, const StreamEntry& e);
// An ID without "-", "+" or "*" (ms alone means seq 0); replies Redis's error on failure.
bool ParseStrictStreamId(std::string_view text, ReplyBuilder& rb, StreamId* id);
// "NOGROUP No such key '<key>' or consumer group '<group>'"
std::string NoGroupError(std::string_view key, std::string_view group);

}  // namespace strata
