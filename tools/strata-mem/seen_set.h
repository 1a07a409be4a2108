// SeenSet: remembers which keys `strata-mem report` has already counted, because SCAN
// may return a key more than once (while the server resizes its table).
//
// Stores a 64-bit hash (XXH3) per key, not the key: 8 bytes per key at a load factor of
// at most 1/2, so about 16-32 bytes per key seen. Two different keys with the same hash
// would make the second one count as a duplicate; at 10^8 keys the chance of that
// happening at all is below 10^-3.
// Thread-safety: a value type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace strata::mem {

class SeenSet {
 public:
  // True when the key was not seen before (and records it).
  bool Insert(std::string_view key);
  size_t size() const { return size_; }

 private:
  bool InsertHash(uint64_t h);
  void Grow();

  std::vector<uint64_t> slots_;  // 0 = empty; a hash of 0 is stored as 1
  size_t size_ = 0;
};

}  // namespace strata::mem
