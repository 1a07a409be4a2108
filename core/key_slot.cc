#include "core/key_slot.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace strata {

namespace {

// CRC-16/XMODEM is the remainder of (message * x^16) modulo P = x^16 + x^12 + x^5 + 1,
// bits taken most significant first, from an initial value of 0. So leading zero bytes
// do not change it, and a message can be cut into 64-bit blocks from its end (the first
// block holding the n % 8 leading bytes, right-aligned), each folded into the running
// value as crc' = ((crc << 48) ^ block) * x^16 mod P.
//
// Two ways to fold a block:
//   - sliced by 8 (any CPU): kTables[k][v] is the CRC of byte v followed by k zero bytes,
//     and the block's CRC is the XOR of its 8 bytes' entries;
//   - carry-less multiplication (x86 with PCLMULQDQ), Barrett's reduction: with
//     T = (crc << 48) ^ block and mu = floor(x^80 / P) = x^64 + mu_low,
//     floor(T * x^16 / P) = Q = T ^ high64(T * mu_low), and the remainder is
//     low16(Q * 0x1021): two multiplications per 8 bytes.
using Tables = std::array<std::array<uint16_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t crc = b << 8;
    for (int i = 0; i < 8; i++) crc = (crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1;
    t[0][b] = static_cast<uint16_t>(crc);
  }
  for (size_t k = 1; k < 8; k++) {
    for (uint32_t b = 0; b < 256; b++) {
      uint16_t prev = t[k - 1][b];
      t[k][b] = static_cast<uint16_t>((prev << 8) ^ t[0][prev >> 8]);
    }
  }
  return t;
}

constexpr Tables kTables = MakeTables();

// The low 64 bits of floor(x^80 / P) (its x^64 term is implied), by long division.
constexpr uint64_t MakeMuLow() {
  // Divide x^80 by P (0x11021): quotient bits from x^64 down to x^0.
  unsigned __int128 rem = static_cast<unsigned __int128>(1) << 80;
  uint64_t q = 0;
  for (int bit = 64; bit >= 0; bit--) {
    if ((rem >> (bit + 16)) & 1) {
      rem ^= static_cast<unsigned __int128>(0x11021) << bit;
      if (bit < 64) q |= uint64_t{1} << bit;
    }
  }
  return q;
}

constexpr uint64_t kMuLow = MakeMuLow();

inline uint64_t LoadBE64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

// The first n (1..7) bytes as a big-endian value, right-aligned.
inline uint64_t LoadHeadBE(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v = (v << 8) | p[i];
  return v;
}

inline uint32_t FoldSliced(uint64_t t) {
  return kTables[7][(t >> 56) & 0xff] ^ kTables[6][(t >> 48) & 0xff] ^
         kTables[5][(t >> 40) & 0xff] ^ kTables[4][(t >> 32) & 0xff] ^
         kTables[3][(t >> 24) & 0xff] ^ kTables[2][(t >> 16) & 0xff] ^ kTables[1][(t >> 8) & 0xff] ^
         kTables[0][t & 0xff];
}

// Bits that, summed over a key's 8-byte words and masked with 0x80 in each byte, are
// non-zero when some byte is '{' (the classic test for a zero byte, on word ^ '{'s).
inline uint64_t BraceBits(uint64_t raw) {
  uint64_t x = raw ^ 0x7b7b7b7b7b7b7b7bull;
  return (x - 0x0101010101010101ull) & ~x;
}

uint16_t Crc16Sliced(const unsigned char* p, size_t n) {
  uint32_t crc = 0;
  size_t head = n % 8;
  if (head != 0) {
    crc = FoldSliced(LoadHeadBE(p, head));
    p += head;
    n -= head;
  }
  for (; n > 0; n -= 8, p += 8) crc = FoldSliced((uint64_t{crc} << 48) ^ LoadBE64(p));
  return static_cast<uint16_t>(crc);
}

#if defined(__x86_64__)
__attribute__((target("pclmul,sse4.1"))) inline uint32_t FoldClmul(uint64_t t) {
  __m128i tv = _mm_cvtsi64_si128(static_cast<long long>(t));
  __m128i mu = _mm_cvtsi64_si128(static_cast<long long>(kMuLow));
  uint64_t hi = static_cast<uint64_t>(_mm_extract_epi64(_mm_clmulepi64_si128(tv, mu, 0x00), 1));
  uint64_t q = t ^ hi;
  __m128i qv = _mm_cvtsi64_si128(static_cast<long long>(q));
  __m128i pv = _mm_cvtsi64_si128(0x1021);
  return static_cast<uint32_t>(_mm_cvtsi128_si64(_mm_clmulepi64_si128(qv, pv, 0x00))) & 0xffff;
}

// With kScan, *brace tells whether a '{' was among the bytes (then the key may have a
// hash tag, and its slot is the tag's CRC instead).
template <bool kScan>
__attribute__((target("pclmul,sse4.1"), always_inline)) inline uint16_t Crc16Clmul(
    const unsigned char* p, size_t n, bool* brace) {
  uint32_t crc = 0;
  uint64_t braces = 0;
  size_t head = n % 8;
  if (head != 0) {
    uint64_t v = LoadHeadBE(p, head);
    // The head's missing bytes read as zeros, which are not '{'.
    if constexpr (kScan) braces = BraceBits(v);
    crc = FoldClmul(v);
    p += head;
    n -= head;
  }
  for (; n > 0; n -= 8, p += 8) {
    uint64_t raw;
    std::memcpy(&raw, p, 8);
    if constexpr (kScan) braces |= BraceBits(raw);
    crc = FoldClmul((uint64_t{crc} << 48) ^ __builtin_bswap64(raw));
  }
  if constexpr (kScan) *brace = (braces & 0x8080808080808080ull) != 0;
  return static_cast<uint16_t>(crc);
}

const bool kHaveClmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");

__attribute__((target("pclmul,sse4.1"))) uint16_t Crc16ClmulWhole(const unsigned char* p,
                                                                  size_t n) {
  return Crc16Clmul<false>(p, n, nullptr);
}

__attribute__((noinline)) uint32_t TagSlot(std::string_view key) {
  return Crc16(HashTag(key)) & (kClusterSlots - 1);
}

// One pass: the whole key's CRC, and whether it has a '{' at all (rare); only then is
// the hash tag looked for.
__attribute__((target("pclmul,sse4.1"))) uint32_t SlotClmul(std::string_view key) {
  bool brace = false;
  uint16_t crc =
      Crc16Clmul<true>(reinterpret_cast<const unsigned char*>(key.data()), key.size(), &brace);
  if (brace) [[unlikely]]
    return TagSlot(key);
  return crc & (kClusterSlots - 1);
}
#endif

}  // namespace

uint16_t Crc16(std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
#if defined(__x86_64__)
  if (kHaveClmul) return Crc16ClmulWhole(p, data.size());
#endif
  return Crc16Sliced(p, data.size());
}

uint32_t KeySlot(std::string_view key) {
#if defined(__x86_64__)
  if (kHaveClmul) return SlotClmul(key);
#endif
  return Crc16(HashTag(key)) & (kClusterSlots - 1);
}

uint16_t Crc16Portable(std::string_view data) {
  return Crc16Sliced(reinterpret_cast<const unsigned char*>(data.data()), data.size());
}

}  // namespace strata
