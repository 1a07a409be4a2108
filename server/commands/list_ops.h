// List operations on one shard, shared by the list commands, their cross-shard fibers
// and the blocking-pop machinery.
//
// Each Op* runs on the shard that owns the key and leaves the keyspace consistent on
// return: a list emptied by a pop is deleted, bytes are re-charged. A key of another
// type sets *wrong_type and changes nothing.
//
// Thread-safety: the owning shard's thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/keyspace.h"

namespace strata {

// Pushes `elements` at the left or right end, in order (LPUSH a b c leaves c first).
// With only_if_exists (LPUSHX), nothing is created. Returns the new length (0 when
// nothing was done). With notify, publishes the lpush/rpush keyspace event.
int64_t OpPush(Keyspace& ks, uint32_t db, std::string_view key, bool left,
               std::span<const std::string_view> elements, bool only_if_exists, int64_t now_ms,
               bool* wrong_type, bool notify = true);

// Pops up to n elements from one end. Returns them in pop order; empty when the key is
// absent. *emptied (when given): the pop deleted the list. With notify, publishes the
// lpop/rpop keyspace event (and del when emptied); without, the caller publishes them
// later with NotifyPopped (LMOVE publishes the push first, as Redis).
std::vector<std::string> OpPop(Keyspace& ks, uint32_t db, std::string_view key, bool left, size_t n,
                               int64_t now_ms, bool* wrong_type, bool notify = true,
                               bool* emptied = nullptr);
void NotifyPopped(uint32_t db, std::string_view key, bool left, bool emptied);

// Replaces the elements of list e (key) with fn's result: fn edits the vector and returns
// true when it changed anything. An emptied list is deleted. REQUIRES: e is key's entry.
void OpRewrite(Keyspace& ks, uint32_t db, std::string_view key, Entry* e,
               const std::function<bool(std::vector<std::string>&)>& fn);

// The length of a list key (0 when absent).
int64_t OpLength(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms, bool* wrong_type);

}  // namespace strata
