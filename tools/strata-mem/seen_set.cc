#include "tools/strata-mem/seen_set.h"

#include <xxhash.h>

namespace strata::mem {

bool SeenSet::Insert(std::string_view key) {
  uint64_t h = XXH3_64bits(key.data(), key.size());
  if (h == 0) h = 1;
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  return InsertHash(h);
}

bool SeenSet::InsertHash(uint64_t h) {
  size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (slots_[i] == h) return false;
    if (slots_[i] == 0) {
      slots_[i] = h;
      size_++;
      return true;
    }
  }
}

void SeenSet::Grow() {
  std::vector<uint64_t> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, 0);
  size_ = 0;
  for (uint64_t h : old) {
    if (h != 0) InsertHash(h);
  }
}

}  // namespace strata::mem
