#include "core/hash.h"

#include <bit>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace strata {

uint64_t TableHash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

namespace {

static_assert(std::endian::native == std::endian::little, "BraceBits reads words little-endian");

// The high bit of each byte of w that is '{'. Borrows can also flag a byte above a true
// match, never one below it, so the lowest flag is the first '{' in the word.
inline uint64_t BraceBits(uint64_t w) {
  uint64_t x = w ^ 0x7b7b7b7b7b7b7b7bULL;
  return (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL;
}

// The position of the first '{' in [p, p + n), or npos: whole words within the key (the
// last one overlapping the one before), so that a key of a few words costs a few
// instructions rather than a call to memchr. Every key routed to a shard passes here.
inline size_t FindBrace(const char* p, size_t n) {
  if (n < 8) {
    for (size_t i = 0; i < n; i++) {
      if (p[i] == '{') return i;
    }
    return std::string_view::npos;
  }
  size_t i = 0;
  uint64_t w;
  for (; i + 8 <= n; i += 8) {
    std::memcpy(&w, p + i, 8);
    if (uint64_t b = BraceBits(w)) return i + static_cast<size_t>(std::countr_zero(b)) / 8;
  }
  if (i < n) {
    std::memcpy(&w, p + n - 8, 8);
    if (uint64_t b = BraceBits(w)) return n - 8 + static_cast<size_t>(std::countr_zero(b)) / 8;
  }
  return std::string_view::npos;
}

// Whether [p, p + n) holds a '{' (almost no key does): for a key of up to 16 bytes, two
// overlapping loads and no branch on the bytes.
inline bool HasBrace(const char* p, size_t n) {
  if (n > 16) return FindBrace(p, n) != std::string_view::npos;
  if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + n - 8, 8);
    return (BraceBits(a) | BraceBits(b)) != 0;
  }
  if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    return BraceBits(uint64_t{a} | uint64_t{b} << 32) != 0;
  }
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '{') return true;
  }
  return false;
}

}  // namespace

std::string_view HashTag(std::string_view key) {
  size_t open = FindBrace(key.data(), key.size());
  if (open == std::string_view::npos) return key;
  size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

uint64_t ShardHash(std::string_view key) {
  if (!HasBrace(key.data(), key.size())) [[likely]]
    return TableHash(key);
  return TableHash(HashTag(key));
}

uint64_t ShardHashOf(std::string_view key, uint64_t table_hash) {
  if (!HasBrace(key.data(), key.size())) [[likely]]
    return table_hash;
  return TableHash(HashTag(key));
}

}  // namespace strata
