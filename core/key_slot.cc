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
//     low16(Q * 0x1021): two multiplications per 8 bytes. Keys of 16 bytes or more are
//     folded 16 bytes at a time, in three multiplications (Fold16).
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
#define STRATA_CLMUL __attribute__((target("pclmul,sse4.1")))

STRATA_CLMUL inline uint32_t FoldClmul(uint64_t t) {
  __m128i tv = _mm_cvtsi64_si128(static_cast<long long>(t));
  __m128i mu = _mm_cvtsi64_si128(static_cast<long long>(kMuLow));
  uint64_t hi = static_cast<uint64_t>(_mm_extract_epi64(_mm_clmulepi64_si128(tv, mu, 0x00), 1));
  uint64_t q = t ^ hi;
  __m128i qv = _mm_cvtsi64_si128(static_cast<long long>(q));
  __m128i pv = _mm_cvtsi64_si128(0x1021);
  return static_cast<uint32_t>(_mm_cvtsi128_si64(_mm_clmulepi64_si128(qv, pv, 0x00))) & 0xffff;
}

// x^80 mod P, by long division.
constexpr uint32_t MakeX80ModP() {
  uint32_t r = 1;  // x^0
  for (int i = 0; i < 80; i++) r = (r & 0x8000) ? ((r << 1) ^ 0x1021) & 0xffff : r << 1;
  return r;
}
constexpr uint32_t kX80ModP = MakeX80ModP();

// A 16-byte block B = H * x^64 + L (big-endian) folded into the running value:
// crc' = ((crc * x^112) ^ B) * x^16 mod P. With crc in B's top 16 bits, that is
// (H * x^80 + L * x^16) mod P, and H * x^80 = H * (x^80 mod P) (mod P); the sum S has at
// most 80 bits, so S mod P is the Barrett fold of S >> 16 (as FoldClmul), XOR S's low 16
// bits: three multiplications per 16 bytes, where two 8-byte folds take four. All of it
// stays in vector registers. The result's low 16 bits are the CRC; the bits above are
// not cleared.
struct Fold16Constants {
  __m128i x80;  // x^80 mod P
  __m128i mu;   // kMuLow
  __m128i p;    // P without its x^16 term
};

STRATA_CLMUL inline __m128i Fold16(__m128i block, const Fold16Constants& k) {
  __m128i prod = _mm_clmulepi64_si128(block, k.x80, 0x01);       // H * (x^80 mod P)
  __m128i s_hi = _mm_xor_si128(_mm_srli_si128(prod, 2), block);  // low qword: S >> 16
  __m128i hi = _mm_srli_si128(_mm_clmulepi64_si128(s_hi, k.mu, 0x00), 8);
  __m128i q = _mm_xor_si128(s_hi, hi);
  return _mm_xor_si128(_mm_clmulepi64_si128(q, k.p, 0x00), prod);
}

// pshufb masks: kHeadMasks[h] turns 16 bytes as loaded into a big-endian value holding
// only the first h of them, right-aligned (0x80 lanes read as zero); kHeadMasks[16]
// reverses all 16.
using Masks = std::array<std::array<uint8_t, 16>, 17>;
constexpr Masks MakeHeadMasks() {
  Masks m{};
  for (size_t h = 0; h <= 16; h++) {
    for (size_t i = 0; i < 16; i++) m[h][i] = i < h ? static_cast<uint8_t>(h - 1 - i) : 0x80;
  }
  return m;
}
alignas(16) constexpr Masks kHeadMasks = MakeHeadMasks();

STRATA_CLMUL inline __m128i Mask(size_t h) {
  return _mm_load_si128(reinterpret_cast<const __m128i*>(kHeadMasks[h].data()));
}

// The CRC by 16-byte blocks, for n >= 16. The first block is the n % 16 leading bytes (or
// a whole 16), read as a 16-byte load masked to those bytes: leading zeros do not change
// the CRC. With kScan, *brace tells whether a '{' was among the bytes (then the key may
// have a hash tag, and its slot is the tag's CRC instead).
template <bool kScan>
STRATA_CLMUL __attribute__((always_inline)) inline uint16_t Crc16Clmul16(const unsigned char* p,
                                                                         size_t n, bool* brace) {
  const Fold16Constants k{_mm_cvtsi64_si128(kX80ModP),
                          _mm_cvtsi64_si128(static_cast<long long>(kMuLow)),
                          _mm_cvtsi64_si128(0x1021)};
  const __m128i open = _mm_set1_epi8('{');
  size_t first = n % 16 != 0 ? n % 16 : 16;
  __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i braces = _mm_setzero_si128();
  if constexpr (kScan) braces = _mm_cmpeq_epi8(raw, open);  // all 16 bytes are the key's
  __m128i crc = Fold16(_mm_shuffle_epi8(raw, Mask(first)), k);
  p += first;
  n -= first;
  if (n > 0) {
    const __m128i reverse = Mask(16);
    for (; n > 0; n -= 16, p += 16) {
      raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      if constexpr (kScan) braces = _mm_or_si128(braces, _mm_cmpeq_epi8(raw, open));
      // The running CRC's 16 bits go to the block's top 16 (the bits above them drop).
      __m128i block = _mm_xor_si128(_mm_shuffle_epi8(raw, reverse), _mm_slli_si128(crc, 14));
      crc = Fold16(block, k);
    }
  }
  if constexpr (kScan) *brace = _mm_movemask_epi8(braces) != 0;
  return static_cast<uint16_t>(_mm_cvtsi128_si32(crc));
}

// The same by 8-byte blocks, for n < 16.
template <bool kScan>
STRATA_CLMUL __attribute__((always_inline)) inline uint16_t Crc16Clmul8(const unsigned char* p,
                                                                        size_t n, bool* brace) {
  uint32_t crc = 0;
  uint64_t braces = 0;
  size_t head = n % 8;
  if (head != 0) {
    // With 8 bytes or more, the leading bytes come from one load; fewer, byte by byte.
    uint64_t v;
    if (n >= 8) {
      uint64_t raw;
      std::memcpy(&raw, p, 8);
      v = __builtin_bswap64(raw) >> (64 - 8 * head);
    } else {
      v = LoadHeadBE(p, head);
    }
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

template <bool kScan>
STRATA_CLMUL __attribute__((always_inline)) inline uint16_t Crc16Clmul(const unsigned char* p,
                                                                       size_t n, bool* brace) {
  return n >= 16 ? Crc16Clmul16<kScan>(p, n, brace) : Crc16Clmul8<kScan>(p, n, brace);
}

const bool kHaveClmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");

STRATA_CLMUL uint16_t Crc16ClmulWhole(const unsigned char* p, size_t n) {
  return Crc16Clmul<false>(p, n, nullptr);
}

__attribute__((noinline)) uint32_t TagSlot(std::string_view key) {
  return Crc16(HashTag(key)) & (kClusterSlots - 1);
}

// One pass: the whole key's CRC, and whether it has a '{' at all (rare); only then is
// the hash tag looked for.
STRATA_CLMUL uint32_t SlotClmul(std::string_view key) {
  bool brace = false;
  uint16_t crc =
      Crc16Clmul<true>(reinterpret_cast<const unsigned char*>(key.data()), key.size(), &brace);
  if (brace) [[unlikely]]
    return TagSlot(key);
  return crc & (kClusterSlots - 1);
}
#undef STRATA_CLMUL
#endif

}  // namespace

uint16_t Crc16(std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
#if defined(__x86_64__)
  if (kHaveClmul) return Crc16ClmulWhole(p, data.size());
#endif
  return Crc16Sliced(p, data.size());
}

namespace key_slot_detail {
namespace {

uint32_t SlotPortable(std::string_view key) { return Crc16(HashTag(key)) & (kClusterSlots - 1); }

// The first call picks the implementation for this CPU and installs it.
uint32_t ResolveSlot(std::string_view key) {
  SlotFn fn = SlotPortable;
#if defined(__x86_64__)
  __builtin_cpu_init();  // may run before the static constructors
  if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) fn = SlotClmul;
#endif
  slot_fn.store(fn, std::memory_order_relaxed);
  return fn(key);
}

}  // namespace

std::atomic<SlotFn> slot_fn{&ResolveSlot};

}  // namespace key_slot_detail

uint16_t Crc16Portable(std::string_view data) {
  return Crc16Sliced(reinterpret_cast<const unsigned char*>(data.data()), data.size());
}

}  // namespace strata
