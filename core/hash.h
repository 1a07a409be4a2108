// Key hashing and key-to-shard mapping.
//
// Owns: the two hashes every key has.
//   - TableHash(key): xxh3 of the whole key; it places the key inside a shard's table
//     and orders SCAN cursors.
//   - ShardHash(key): xxh3 of the key's {hashtag} when it has a non-empty one, else the
//     TableHash. Keys sharing a tag therefore live on one shard, so multi-key commands
//     over them take the single-shard fast path.
// ShardOf() maps a ShardHash to [0, shard_count) with a multiply-shift on the low 32
// bits, leaving the top bits (which the table uses) independent of the shard choice.
//
// Thread-safety: pure functions, callable from any thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace strata {

uint64_t TableHash(std::string_view key);

// The part of `key` that decides its shard: the text between the first '{' and the
// next '}' when that text is non-empty (Redis Cluster's rule), else the whole key.
std::string_view HashTag(std::string_view key);

uint64_t ShardHash(std::string_view key);
// ShardHash(key) for a caller that has TableHash(key) already (the same hash unless the
// key has a tag).
uint64_t ShardHashOf(std::string_view key, uint64_t table_hash);

inline uint32_t ShardOf(uint64_t shard_hash, uint32_t shard_count) {
  return static_cast<uint32_t>(
      (static_cast<uint64_t>(static_cast<uint32_t>(shard_hash)) * shard_count) >> 32);
}

inline uint32_t ShardOfKey(std::string_view key, uint32_t shard_count) {
  return shard_count == 1 ? 0 : ShardOf(ShardHash(key), shard_count);
}

}  // namespace strata
