// Key names and random values for `strata-mem bench`, the way memtier_benchmark makes
// them: keys are a prefix plus a decimal number ("memtier-1" ... "memtier-N"), values
// are random printable ASCII, different for every key (memtier's --random-data).
//
// ValueGen is a splitmix64 stream: deterministic for a seed, fast, and not for
// anything that needs real randomness.
// Thread-safety: a value type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::mem {

// prefix + decimal n ("memtier-" and 42 -> "memtier-42").
std::string MemtierKey(std::string_view prefix, uint64_t n);

class ValueGen {
 public:
  // Values use the 94 printable, non-space ASCII characters '!' .. '~'.
  static constexpr char kFirst = '!';
  static constexpr int kAlphabet = 94;

  explicit ValueGen(uint64_t seed) : state_(seed) {}

  uint64_t Next64();
  // Overwrites out[0, n) with random printable characters.
  void Fill(char* out, size_t n);
  std::string Value(size_t n);

 private:
  uint64_t state_;
};

}  // namespace strata::mem
