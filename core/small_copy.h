// CopySmall: memcpy for the few bytes of a command name, a key or a value's tail,
// without a call: two overlapping loads and stores of a power of two; more than 16
// bytes call memcpy.
// Thread-safety: a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata {

[[gnu::always_inline]] inline void CopySmall(char* dst, const char* src, size_t n) {
  if (n >= 8) {
    if (n > 16) {
      std::memcpy(dst, src, n);
      return;
    }
    uint64_t a, b;
    std::memcpy(&a, src, 8);
    std::memcpy(&b, src + n - 8, 8);
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + n - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + n - 4, &b, 4);
  } else if (n > 0) {
    // 1 to 3 bytes: the first, the middle and the last cover them.
    dst[0] = src[0];
    dst[n / 2] = src[n / 2];
    dst[n - 1] = src[n - 1];
  }
}

}  // namespace strata
