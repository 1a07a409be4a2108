#include "core/bitmap.h"

#include <algorithm>
#include <cstring>

namespace strata::bitmap {
namespace {

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline void Store64(char* p, uint64_t v) { std::memcpy(p, &v, 8); }

// The bits a..b (0 = most significant) of one byte, as a mask. REQUIRES: a <= b <= 7.
inline uint8_t RangeMask(unsigned a, unsigned b) {
  return static_cast<uint8_t>((0xFFu >> a) & (0xFFu << (7 - b)));
}

// One body, built twice: with the popcnt instruction and without (the compiler's
// bit-twiddling sequence).
template <int kVariant>
inline uint64_t CountBody(const char* p, size_t n) {
  uint64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    c0 += static_cast<uint64_t>(__builtin_popcountll(Load64(p + i)));
    c1 += static_cast<uint64_t>(__builtin_popcountll(Load64(p + i + 8)));
    c2 += static_cast<uint64_t>(__builtin_popcountll(Load64(p + i + 16)));
    c3 += static_cast<uint64_t>(__builtin_popcountll(Load64(p + i + 24)));
  }
  for (; i + 8 <= n; i += 8) c0 += static_cast<uint64_t>(__builtin_popcountll(Load64(p + i)));
  for (; i < n; i++) c0 += static_cast<uint64_t>(__builtin_popcount(static_cast<uint8_t>(p[i])));
  return c0 + c1 + c2 + c3;
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("popcnt"))) uint64_t CountPopcnt(const char* p, size_t n) {
  return CountBody<1>(p, n);
}
bool HavePopcnt() {
  static const bool have = __builtin_cpu_supports("popcnt");
  return have;
}
#else
uint64_t CountPopcnt(const char* p, size_t n) { return CountBody<1>(p, n); }
bool HavePopcnt() { return false; }
#endif
uint64_t CountPortable(const char* p, size_t n) { return CountBody<0>(p, n); }

uint64_t CountBytes(const char* p, size_t n) {
  return HavePopcnt() ? CountPopcnt(p, n) : CountPortable(p, n);
}

// The first bit set in byte b (0 = most significant).
inline int FirstSet(uint8_t b) { return __builtin_clz(static_cast<unsigned>(b)) - 24; }

}  // namespace

uint64_t Count(std::string_view s) { return CountBytes(s.data(), s.size()); }

uint64_t CountRange(std::string_view s, uint64_t first, uint64_t last) {
  uint64_t fb = ByteOf(first), lb = ByteOf(last);
  auto byte = [&](uint64_t i) { return static_cast<uint8_t>(s[i]); };
  unsigned a = first & 7, b = last & 7;
  if (fb == lb) return static_cast<uint64_t>(__builtin_popcount(byte(fb) & RangeMask(a, b)));
  uint64_t n = static_cast<uint64_t>(__builtin_popcount(byte(fb) & RangeMask(a, 7))) +
               static_cast<uint64_t>(__builtin_popcount(byte(lb) & RangeMask(0, b)));
  return n + CountBytes(s.data() + fb + 1, lb - fb - 1);
}

int64_t FindRange(std::string_view s, uint64_t first, uint64_t last, int bit) {
  uint64_t fb = ByteOf(first), lb = ByteOf(last);
  // Bits equal to `bit` in byte i, within the range.
  auto hits = [&](uint64_t i) {
    uint8_t v = static_cast<uint8_t>(s[i]);
    if (bit == 0) v = static_cast<uint8_t>(~v);
    unsigned a = i == fb ? (first & 7) : 0, b = i == lb ? (last & 7) : 7;
    return static_cast<uint8_t>(v & RangeMask(a, b));
  };
  uint64_t i = fb;
  if (uint8_t h = hits(i); h != 0) return static_cast<int64_t>(i * 8 + FirstSet(h));
  if (i == lb) return -1;
  i++;
  // Whole words that hold no such bit are skipped.
  const uint64_t skip = bit == 0 ? ~uint64_t{0} : 0;
  while (i + 8 <= lb && Load64(s.data() + i) == skip) i += 8;
  for (; i <= lb; i++) {
    if (uint8_t h = hits(i); h != 0) return static_cast<int64_t>(i * 8 + FirstSet(h));
  }
  return -1;
}

void Combine(Op op, const std::vector<std::string_view>& srcs, size_t n, char* dst) {
  std::string_view first = srcs[0];
  size_t have = std::min(first.size(), n);
  if (have > 0) std::memcpy(dst, first.data(), have);
  if (n > have) std::memset(dst + have, 0, n - have);
  if (op == Op::kNot) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) Store64(dst + i, ~Load64(dst + i));
    for (; i < n; i++) dst[i] = static_cast<char>(~dst[i]);
    return;
  }
  for (size_t k = 1; k < srcs.size(); k++) {
    std::string_view src = srcs[k];
    size_t m = std::min(src.size(), n);
    size_t i = 0;
    switch (op) {
      case Op::kAnd:
        for (; i + 8 <= m; i += 8) Store64(dst + i, Load64(dst + i) & Load64(src.data() + i));
        for (; i < m; i++) dst[i] = static_cast<char>(dst[i] & src[i]);
        if (n > m) std::memset(dst + m, 0, n - m);  // a shorter source is zeros there
        break;
      case Op::kOr:
        for (; i + 8 <= m; i += 8) Store64(dst + i, Load64(dst + i) | Load64(src.data() + i));
        for (; i < m; i++) dst[i] = static_cast<char>(dst[i] | src[i]);
        break;
      case Op::kXor:
        for (; i + 8 <= m; i += 8) Store64(dst + i, Load64(dst + i) ^ Load64(src.data() + i));
        for (; i < m; i++) dst[i] = static_cast<char>(dst[i] ^ src[i]);
        break;
      case Op::kNot:
        break;
    }
  }
}

uint64_t GetField(std::string_view s, uint64_t offset, int bits) {
  uint64_t v = 0;
  for (int j = 0; j < bits; j++) v = (v << 1) | static_cast<uint64_t>(GetBit(s, offset + j));
  return v;
}

void SetField(char* s, size_t n, uint64_t offset, int bits, uint64_t v) {
  for (int j = 0; j < bits; j++) {
    uint64_t i = offset + j;
    uint64_t b = ByteOf(i);
    if (b >= n) return;
    bool on = (v >> (bits - 1 - j)) & 1;
    uint8_t cur = static_cast<uint8_t>(s[b]);
    s[b] = static_cast<char>(on ? (cur | MaskOf(i)) : (cur & ~MaskOf(i)));
  }
}

int64_t SignExtend(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  uint64_t sign = uint64_t{1} << (bits - 1);
  uint64_t low = v & ((uint64_t{1} << bits) - 1);
  return static_cast<int64_t>((low ^ sign) - sign);
}

bool AddField(bool is_signed, int bits, uint64_t value, int64_t incr, Overflow ov, uint64_t* out) {
  __int128 lo, hi, sum;
  if (is_signed) {
    hi = (static_cast<__int128>(1) << (bits - 1)) - 1;
    lo = -hi - 1;
    sum = static_cast<__int128>(static_cast<int64_t>(value)) + incr;
  } else {
    hi = (static_cast<__int128>(1) << bits) - 1;
    lo = 0;
    sum = static_cast<__int128>(value) + incr;
  }
  if (sum >= lo && sum <= hi) {
    *out = static_cast<uint64_t>(sum);
    return true;
  }
  if (ov == Overflow::kSat) {
    *out = static_cast<uint64_t>(sum > hi ? hi : lo);
  } else if (ov == Overflow::kWrap) {
    // The sum modulo 2^bits, sign-extended for a signed field.
    uint64_t w = static_cast<uint64_t>(sum);
    if (bits < 64)
      w = is_signed ? static_cast<uint64_t>(SignExtend(w, bits))
                    : (w & ((uint64_t{1} << bits) - 1));
    *out = w;
  }
  return false;
}

}  // namespace strata::bitmap
