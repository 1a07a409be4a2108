#include "core/ascii7.h"

#include <cstring>

#include "core/small_copy.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strata::ascii7 {

namespace {

constexpr size_t kGroup = 16;
constexpr size_t kPackedGroup = 14;

// Portable group codec: 16 characters <-> 14 bytes.
inline void PackGroupPortable(const char* in, char* out) {
  uint32_t extra = static_cast<uint32_t>(static_cast<unsigned char>(in[14])) |
                   static_cast<uint32_t>(static_cast<unsigned char>(in[15])) << 7;
  for (size_t i = 0; i < kPackedGroup; i++) {
    out[i] = static_cast<char>(static_cast<unsigned char>(in[i]) | (((extra >> i) & 1) << 7));
  }
}

inline void UnpackGroupPortable(const char* in, char* out) {
  uint32_t extra = 0;
  for (size_t i = 0; i < kPackedGroup; i++) {
    unsigned char b = static_cast<unsigned char>(in[i]);
    out[i] = static_cast<char>(b & 0x7f);
    extra |= static_cast<uint32_t>(b >> 7) << i;
  }
  out[14] = static_cast<char>(extra & 0x7f);
  out[15] = static_cast<char>((extra >> 7) & 0x7f);
}

// The last partial group (r = n % 16 characters).
void PackTail(const char* in, size_t r, char* out) {
  if (r <= kPackedGroup) {
    CopySmall(out, in, r);
    return;
  }
  char group[kGroup] = {};
  std::memcpy(group, in, r);
  PackGroupPortable(group, out);
}

void UnpackTail(const char* in, size_t r, char* out) {
  if (r <= kPackedGroup) {
    std::memcpy(out, in, r);
    return;
  }
  char group[kGroup];
  UnpackGroupPortable(in, group);
  std::memcpy(out, group, r);
}

}  // namespace

namespace detail {

void PackPortable(std::string_view s, char* dst) {
  const char* p = s.data();
  size_t n = s.size();
  for (; n >= kGroup; n -= kGroup, p += kGroup, dst += kPackedGroup) PackGroupPortable(p, dst);
  PackTail(p, n, dst);
}

void UnpackPortable(const char* src, size_t n, char* dst) {
  for (; n >= kGroup; n -= kGroup, src += kPackedGroup, dst += kGroup) {
    UnpackGroupPortable(src, dst);
  }
  UnpackTail(src, n, dst);
}

}  // namespace detail

bool IsAscii(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
#if defined(__SSE2__)
  if (n >= 16) {
    // Whole 16-byte blocks, then the last 16 bytes (overlapping the last block) for the
    // rest: no byte loop for a value's tail.
    __m128i acc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16));
    for (; n >= 16; n -= 16, p += 16) {
      acc = _mm_or_si128(acc, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    return _mm_movemask_epi8(acc) == 0;
  }
#endif
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

#if defined(__SSE2__)

namespace {

// One group: the 16 characters at p with characters 14 and 15 moved into the high bits
// of bytes 0..13 (bytes 14 and 15 of the result are junk).
inline __m128i PackGroupSse2(const char* p) {
  // Byte i of `select` has bit (i mod 8) set; bytes 8..13 test the high byte of extra.
  const __m128i select = _mm_set_epi8(0, 0, 32, 16, 8, 4, 2, 1, -128, 64, 32, 16, 8, 4, 2, 1);
  const __m128i high = _mm_set1_epi8(static_cast<char>(0x80));
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  uint32_t pair = static_cast<uint32_t>(_mm_extract_epi16(v, 7));
  uint32_t extra = (pair & 0x7f) | ((pair >> 1) & 0x3f80);
  // Low byte of extra in lanes 0..7, high byte in lanes 8..15.
  __m128i rep = _mm_cvtsi32_si128(static_cast<int>(extra));
  rep = _mm_unpacklo_epi8(rep, rep);
  rep = _mm_unpacklo_epi16(rep, rep);
  rep = _mm_unpacklo_epi32(rep, rep);
  __m128i hit = _mm_cmpeq_epi8(_mm_and_si128(rep, select), select);
  return _mm_or_si128(v, _mm_and_si128(hit, high));
}

}  // namespace

void Pack(std::string_view s, char* dst) {
  const char* p = s.data();
  size_t n = s.size();
  // While at least 2 more packed bytes follow this group, store all 16 bytes: the next
  // group or the tail overwrites the 2 junk bytes.
  for (; n >= kGroup + 2; n -= kGroup, p += kGroup, dst += kPackedGroup) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), PackGroupSse2(p));
  }
  if (n >= kGroup) {
    alignas(16) char tmp[kGroup];
    _mm_store_si128(reinterpret_cast<__m128i*>(tmp), PackGroupSse2(p));
    std::memcpy(dst, tmp, kPackedGroup);
    n -= kGroup;
    p += kGroup;
    dst += kPackedGroup;
  }
  PackTail(p, n, dst);
}

void Unpack(const char* src, size_t n, char* dst) {
  const __m128i low7 = _mm_set1_epi8(0x7f);
  // Whole groups while 16 bytes can be read without running past the input (the group
  // itself is 14 bytes; the next group or the tail provides the other 2).
  while (n >= kGroup + 2) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    uint32_t mask = static_cast<uint32_t>(_mm_movemask_epi8(v));
    __m128i out = _mm_and_si128(v, low7);
    out = _mm_insert_epi16(out, static_cast<int>((mask & 0x7f) | ((mask << 1) & 0x7f00)), 7);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), out);
    src += kPackedGroup;
    dst += kGroup;
    n -= kGroup;
  }
  if (n <= kPackedGroup) {
    CopySmall(dst, src, n);  // a short tail is stored raw
  } else {
    detail::UnpackPortable(src, n, dst);
  }
}

#else

void Pack(std::string_view s, char* dst) { detail::PackPortable(s, dst); }
void Unpack(const char* src, size_t n, char* dst) { detail::UnpackPortable(src, n, dst); }

#endif

}  // namespace strata::ascii7
