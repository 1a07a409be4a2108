#include "tools/strata-mem/value_gen.h"

namespace strata::mem {

std::string MemtierKey(std::string_view prefix, uint64_t n) {
  std::string key(prefix);
  key += std::to_string(n);
  return key;
}

uint64_t ValueGen::Next64() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void ValueGen::Fill(char* out, size_t n) {
  // 94^9 < 2^64: nine characters per 64-bit draw (the slight bias towards low digits of
  // the base-94 expansion does not matter for filler data).
  size_t i = 0;
  while (i < n) {
    uint64_t r = Next64();
    for (int k = 0; k < 9 && i < n; k++, i++) {
      out[i] = static_cast<char>(kFirst + static_cast<int>(r % kAlphabet));
      r /= kAlphabet;
    }
  }
}

std::string ValueGen::Value(size_t n) {
  std::string v(n, '\0');
  Fill(v.data(), n);
  return v;
}

}  // namespace strata::mem
