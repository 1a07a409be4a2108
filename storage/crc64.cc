#include "storage/crc64.h"

#include <array>
#include <bit>
#include <cstring>

namespace strata::crc64 {

namespace {

static_assert(std::endian::native == std::endian::little, "the 8-byte step reads little-endian");

constexpr uint64_t kReflectedPoly = 0x95ac9329ac4bc9b5ull;  // 0xad93d23594c935a9 reversed

struct Tables {
  std::array<std::array<uint64_t, 256>, 8> t;
  Tables() {
    for (uint32_t b = 0; b < 256; b++) {
      uint64_t c = b;
      for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kReflectedPoly : c >> 1;
      t[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++) {
      for (int s = 1; s < 8; s++) t[s][b] = (t[s - 1][b] >> 8) ^ t[0][t[s - 1][b] & 0xff];
    }
  }
};

const Tables& T() {
  static const Tables tables;
  return tables;
}

}  // namespace

namespace detail {

uint64_t ExtendBytewise(uint64_t crc, const void* data, size_t n) {
  const auto& t = T().t[0];
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; i++) crc = t[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace detail

uint64_t Extend(uint64_t crc, const void* data, size_t n) {
  const auto& t = T().t;
  const auto* p = static_cast<const unsigned char*>(data);
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);  // little-endian (x86-64)
    crc ^= v;
    crc = t[7][crc & 0xff] ^ t[6][(crc >> 8) & 0xff] ^ t[5][(crc >> 16) & 0xff] ^
          t[4][(crc >> 24) & 0xff] ^ t[3][(crc >> 32) & 0xff] ^ t[2][(crc >> 40) & 0xff] ^
          t[1][(crc >> 48) & 0xff] ^ t[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  return detail::ExtendBytewise(crc, p, n);
}

}  // namespace strata::crc64
