#include "core/ascii7.h"

#include <cstring>

namespace strata::ascii7 {

namespace {

// Gathers the low 7 bits of each of 8 bytes into the low 56 bits.
inline uint64_t Gather(uint64_t x) {
  x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
  x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
  x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
  return x;
}

// Inverse of Gather: spreads the low 56 bits into the low 7 bits of 8 bytes.
inline uint64_t Scatter(uint64_t x) {
  x = (x & 0x000000000fffffffull) | ((x & 0x00fffffff0000000ull) << 4);
  x = (x & 0x00003fff00003fffull) | ((x & 0x0fffc0000fffc000ull) << 2);
  x = (x & 0x007f007f007f007full) | ((x & 0x3f803f803f803f80ull) << 1);
  return x;
}

}  // namespace

bool IsAscii(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t acc = 0;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    acc |= w;
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    acc |= static_cast<unsigned char>(*p++);
    n--;
  }
  return (acc & 0x8080808080808080ull) == 0;
}

void Pack(std::string_view s, char* dst) {
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    uint64_t g = Gather(w);
    std::memcpy(dst, &g, 7);  // little-endian: the low 7 bytes hold the 56 bits
    p += 8;
    n -= 8;
    dst += 7;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    uint64_t g = Gather(w);
    std::memcpy(dst, &g, PackedSize(n));
  }
}

void Unpack(const char* src, size_t n, char* dst) {
  // Whole groups while 8 source bytes can be read without running past the input.
  while (n >= 9) {
    uint64_t g;
    std::memcpy(&g, src, 8);
    uint64_t w = Scatter(g & 0x00ffffffffffffffull);
    std::memcpy(dst, &w, 8);
    src += 7;
    dst += 8;
    n -= 8;
  }
  while (n > 0) {
    size_t chars = n < 8 ? n : 8;
    uint64_t g = 0;
    std::memcpy(&g, src, PackedSize(chars));
    uint64_t w = Scatter(g & 0x00ffffffffffffffull);
    std::memcpy(dst, &w, chars);
    src += 7;
    dst += chars;
    n -= chars;
  }
}

}  // namespace strata::ascii7
