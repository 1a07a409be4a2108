#include "core/hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace strata {

uint64_t TableHash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

std::string_view HashTag(std::string_view key) {
  size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

uint64_t ShardHash(std::string_view key) { return TableHash(HashTag(key)); }

}  // namespace strata
