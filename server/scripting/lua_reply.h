// Conversions between command replies and Lua values, by Redis 7's rules.
//
//   Push   a command's reply (RESP2 or RESP3 bytes, as redis.call gets them) becomes a
//          Lua value: integer -> number, bulk -> string, RESP2 null -> false, array ->
//          table, status -> {ok=...}, error -> {err=...}; RESP3 adds map -> {map={...}},
//          set -> {set={member=true}}, null -> nil, double -> {double=n}, boolean ->
//          boolean, big number -> {big_number="..."}, verbatim -> {verbatim_string=
//          {format=..., string=...}}.
//   Write  a script's value becomes the reply: string -> bulk, number -> integer
//          (truncated), table {err=} -> error, {ok=} -> status, {double=}, {big_number=},
//          {map=}, {set=}, {verbatim_string=} -> their RESP3 types (RESP2 forms for a
//          RESP2 client), any other table -> array of t[1], t[2]... up to the first nil;
//          true -> 1 (script in RESP2) or boolean, false -> null (script in RESP2) or
//          boolean; nil and anything else -> null. An {err=} table marked with
//          kErrorCountedField is written uncounted (ReplyBuilder::ErrorUncounted).
// Both bound nesting at kMaxDepth: deeper replies are refused, deeper (or cyclic) Lua
// tables are written as an error reply instead.
// Thread-safety: the calling thread's own lua_State.
#pragma once

#include <cstddef>
#include <string_view>

#include "server/net/reply_builder.h"

struct lua_State;

namespace strata::lua_reply {

inline constexpr int kMaxDepth = 256;

// Set (true) on the {err=...} table of a command's error reply that redis.call raises or
// redis.pcall returns: that reply was counted in the error statistics already, so the
// script's reply that passes it on is not counted again (Write, and the script's raised
// error). Redis 7 marks the table with the same field, visible to the script.
inline constexpr const char* kErrorCountedField = "ignore_error_stats_update";

// Pushes the one reply at the start of `reply` onto L's stack; returns the bytes it took,
// or 0 (nothing pushed) when the bytes are not one complete reply or nest too deep.
size_t Push(lua_State* L, std::string_view reply);

// Writes the value at `index` of L's stack as a reply. script_resp: the protocol the
// script chose with redis.setresp (2 or 3).
void Write(lua_State* L, int index, int script_resp, ReplyBuilder& rb);

}  // namespace strata::lua_reply
