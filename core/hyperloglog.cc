#include "core/hyperloglog.h"

#include <cmath>
#include <cstring>

namespace strata::hll {
namespace {

constexpr uint64_t kSeed = 0xadc83b19ULL;
constexpr int kValMax = 32;                            // largest value a VAL opcode holds
constexpr int kValMaxRun = 4;                          // longest run of one VAL opcode
constexpr int kZeroMaxRun = 64;                        // longest run of one ZERO opcode
constexpr double kAlphaInf = 0.721347520444481703680;  // 1 / (2 ln 2)

// ---- the sparse opcodes ----
inline bool IsZero(uint8_t b) { return (b & 0xc0) == 0x00; }
inline bool IsXZero(uint8_t b) { return (b & 0xc0) == 0x40; }
inline bool IsVal(uint8_t b) { return (b & 0x80) != 0; }
inline int ZeroRun(uint8_t b) { return (b & 0x3f) + 1; }
inline int XZeroRun(const uint8_t* p) { return (((p[0] & 0x3f) << 8) | p[1]) + 1; }
inline int ValValue(uint8_t b) { return ((b >> 2) & 0x1f) + 1; }
inline int ValRun(uint8_t b) { return (b & 0x3) + 1; }
inline uint8_t MakeVal(int value, int run) {
  return static_cast<uint8_t>(0x80 | ((value - 1) << 2) | (run - 1));
}
inline uint8_t MakeZero(int run) { return static_cast<uint8_t>(run - 1); }
inline void MakeXZero(uint8_t* p, int run) {
  p[0] = static_cast<uint8_t>(0x40 | ((run - 1) >> 8));
  p[1] = static_cast<uint8_t>((run - 1) & 0xff);
}
// Writes a run of `run` zero registers: ZERO when it fits, XZERO otherwise.
inline uint8_t* PutZeros(uint8_t* p, int run) {
  if (run > kZeroMaxRun) {
    MakeXZero(p, run);
    return p + 2;
  }
  *p = MakeZero(run);
  return p + 1;
}

// ---- dense registers: 6 bits each, little-endian across bytes ----
inline int DenseGet(const uint8_t* regs, int i) {
  size_t bit = static_cast<size_t>(i) * 6;
  size_t b = bit >> 3;
  unsigned fb = bit & 7;
  unsigned v = regs[b] >> fb;
  if (fb > 2) v |= static_cast<unsigned>(regs[b + 1]) << (8 - fb);
  return static_cast<int>(v & 63);
}
inline void DenseSet(uint8_t* regs, int i, int value) {
  size_t bit = static_cast<size_t>(i) * 6;
  size_t b = bit >> 3;
  unsigned fb = bit & 7;
  unsigned v = static_cast<unsigned>(value);
  regs[b] = static_cast<uint8_t>((regs[b] & ~(63u << fb)) | (v << fb));
  if (fb > 2) {
    unsigned hi = 8 - fb;
    regs[b + 1] = static_cast<uint8_t>((regs[b + 1] & ~(63u >> hi)) | (v >> hi));
  }
}

// Four registers at a time: registers 4g..4g+3 are the 24 bits of bytes 3g..3g+2.
template <class Fn>
inline void ForEachDense(const uint8_t* regs, Fn&& fn) {
  for (int g = 0; g < kRegisters / 4; g++) {
    const uint8_t* b = regs + 3 * g;
    uint32_t v = b[0] | (static_cast<uint32_t>(b[1]) << 8) | (static_cast<uint32_t>(b[2]) << 16);
    fn(4 * g, v & 63, (v >> 6) & 63, (v >> 12) & 63, (v >> 18) & 63);
  }
}

uint64_t Murmur64A(const uint8_t* data, size_t len, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  uint64_t h = seed ^ (static_cast<uint64_t>(len) * m);
  const uint8_t* end = data + (len & ~size_t{7});
  for (; data != end; data += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; i--) k = (k << 8) | data[i];  // little-endian, any host
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  size_t rest = len & 7;
  if (rest > 0) {
    for (size_t i = rest; i-- > 0;) h ^= static_cast<uint64_t>(data[i]) << (8 * i);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

// Ertl's sigma and tau (the estimator's corrections for empty and saturated registers).
double Sigma(double x) {
  if (x == 1.0) return INFINITY;
  double y = 1.0, z = x, prev;
  do {
    x *= x;
    prev = z;
    z += x * y;
    y += y;
  } while (prev != z);
  return z;
}

double Tau(double x) {
  if (x == 0.0 || x == 1.0) return 0.0;
  double y = 1.0, z = 1 - x, prev;
  do {
    x = std::sqrt(x);
    prev = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (prev != z);
  return z / 3;
}

uint64_t FromHistogram(const int* histo) {
  double m = kRegisters;
  double z = m * Tau((m - histo[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += histo[j];
    z *= 0.5;
  }
  z += m * Sigma(histo[0] / m);
  return static_cast<uint64_t>(std::llround(kAlphaInf * m * m / z));
}

// Walks a sparse body, calling fn(first register, run, value) per opcode; false when
// the runs do not cover exactly kRegisters.
template <class Fn>
bool WalkSparse(std::string_view v, Fn&& fn) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data()) + kHeaderSize;
  const auto* end = reinterpret_cast<const uint8_t*>(v.data()) + v.size();
  int idx = 0;
  while (p < end) {
    int run, value = 0;
    if (IsZero(*p)) {
      run = ZeroRun(*p);
      p++;
    } else if (IsXZero(*p)) {
      if (p + 1 >= end) return false;
      run = XZeroRun(p);
      p += 2;
    } else {
      run = ValRun(*p);
      value = ValValue(*p);
      p++;
    }
    if (idx + run > kRegisters) return false;
    fn(idx, run, value);
    idx += run;
  }
  return idx == kRegisters;
}

}  // namespace

std::string Empty() {
  std::string v(kHeaderSize + 2, '\0');
  std::memcpy(v.data(), "HYLL", 4);
  v[4] = static_cast<char>(kSparse);
  MakeXZero(reinterpret_cast<uint8_t*>(v.data()) + kHeaderSize, kRegisters);
  return v;
}

bool LooksValid(std::string_view v) {
  if (v.size() < kHeaderSize || v.substr(0, 4) != "HYLL") return false;
  uint8_t enc = EncodingOf(v);
  if (enc > kSparse) return false;
  return enc != kDense || v.size() == kDenseSize;
}

void Hash(std::string_view element, int* index, int* value) {
  uint64_t h = Murmur64A(reinterpret_cast<const uint8_t*>(element.data()), element.size(), kSeed);
  *index = static_cast<int>(h & (kRegisters - 1));
  h >>= kPrecision;
  h |= uint64_t{1} << kQ;  // so that the run ends by bit kQ
  *value = __builtin_ctzll(h) + 1;
}

bool DenseRaise(char* regs, int index, int value) {
  auto* r = reinterpret_cast<uint8_t*>(regs);
  if (DenseGet(r, index) >= value) return false;
  DenseSet(r, index, value);
  return true;
}

bool ToDense(std::string* v) {
  std::string d(kDenseSize, '\0');
  std::memcpy(d.data(), v->data(), kHeaderSize);  // the magic and the cached count
  d[4] = static_cast<char>(kDense);
  auto* regs = reinterpret_cast<uint8_t*>(d.data()) + kHeaderSize;
  bool ok = WalkSparse(*v, [&](int first, int run, int value) {
    if (value == 0) return;
    for (int i = 0; i < run; i++) DenseSet(regs, first + i, value);
  });
  if (!ok) return false;
  v->swap(d);
  return true;
}

int SparseRaise(std::string* v, int index, int value, size_t sparse_max_bytes) {
  auto promote = [&]() -> int {
    if (!ToDense(v)) return -1;
    DenseRaise(v->data() + kHeaderSize, index, value);
    return 1;
  };
  if (value > kValMax) return promote();
  // Step 1: the opcode holding the register.
  auto* base = reinterpret_cast<uint8_t*>(v->data());
  uint8_t* sparse = base + kHeaderSize;
  uint8_t* p = sparse;
  uint8_t* end = base + v->size();
  uint8_t* prev = nullptr;
  int first = 0, span = 0;
  while (p < end) {
    int oplen = 1;
    if (IsZero(*p)) {
      span = ZeroRun(*p);
    } else if (IsVal(*p)) {
      span = ValRun(*p);
    } else {
      if (p + 1 >= end) return -1;
      span = XZeroRun(p);
      oplen = 2;
    }
    if (index <= first + span - 1) break;
    prev = p;
    p += oplen;
    first += span;
  }
  if (span == 0 || p >= end) return -1;
  bool is_zero = IsZero(*p), is_xzero = IsXZero(*p), is_val = IsVal(*p);
  uint8_t* next = is_xzero ? p + 2 : p + 1;
  if (next >= end) next = nullptr;
  int run = is_zero ? ZeroRun(*p) : is_val ? ValRun(*p) : XZeroRun(p);
  bool rewrite = true;
  if (is_val) {
    int old = ValValue(*p);
    if (old >= value) return 0;  // nothing to raise
    if (run == 1) {
      *p = MakeVal(value, 1);
      rewrite = false;
    }
  } else if (is_zero && run == 1) {
    *p = MakeVal(value, 1);
    rewrite = false;
  }
  if (rewrite) {
    // Step 2: the run becomes up to three opcodes: before, the register, after.
    uint8_t seq[5];
    uint8_t* n = seq;
    int last = first + span - 1;
    if (is_zero || is_xzero) {
      if (index != first) n = PutZeros(n, index - first);
      *n++ = MakeVal(value, 1);
      if (index != last) n = PutZeros(n, last - index);
    } else {
      int cur = ValValue(*p);
      if (index != first) *n++ = MakeVal(cur, index - first);
      *n++ = MakeVal(value, 1);
      if (index != last) *n++ = MakeVal(cur, last - index);
    }
    // Step 3: in place of the old opcode, unless the value would grow too big.
    int seqlen = static_cast<int>(n - seq);
    int oldlen = is_xzero ? 2 : 1;
    int delta = seqlen - oldlen;
    if (delta > 0 && v->size() + static_cast<size_t>(delta) > sparse_max_bytes) return promote();
    size_t at = static_cast<size_t>(p - base);
    size_t prev_at = prev != nullptr ? static_cast<size_t>(prev - base) : 0;
    v->replace(at, static_cast<size_t>(oldlen), reinterpret_cast<const char*>(seq),
               static_cast<size_t>(seqlen));
    base = reinterpret_cast<uint8_t*>(v->data());
    sparse = base + kHeaderSize;
    end = base + v->size();
    prev = prev != nullptr ? base + prev_at : nullptr;
  }
  // Step 4: merge equal VAL neighbours, looking at up to five opcodes from the one
  // before the change.
  uint8_t* q = prev != nullptr ? prev : sparse;
  int scan = 5;
  while (q < end && scan-- > 0) {
    if (IsXZero(*q)) {
      q += 2;
      continue;
    }
    if (IsZero(*q)) {
      q++;
      continue;
    }
    if (q + 1 < end && IsVal(q[1]) && ValValue(*q) == ValValue(q[1])) {
      int len = ValRun(*q) + ValRun(q[1]);
      if (len <= kValMaxRun) {
        size_t qa = static_cast<size_t>(q - base);
        v->erase(qa, 1);
        base = reinterpret_cast<uint8_t*>(v->data());
        end = base + v->size();
        q = base + qa;
        *q = MakeVal(ValValue(*q), len);
        continue;  // the merged opcode may merge with the next one too
      }
    }
    q++;
  }
  InvalidateCache(v->data());
  return 1;
}

bool MergeInto(std::string_view v, uint8_t* max) {
  if (EncodingOf(v) == kDense) {
    const auto* regs = reinterpret_cast<const uint8_t*>(v.data()) + kHeaderSize;
    ForEachDense(regs, [&](int i, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
      if (a > max[i]) max[i] = static_cast<uint8_t>(a);
      if (b > max[i + 1]) max[i + 1] = static_cast<uint8_t>(b);
      if (c > max[i + 2]) max[i + 2] = static_cast<uint8_t>(c);
      if (d > max[i + 3]) max[i + 3] = static_cast<uint8_t>(d);
    });
    return true;
  }
  return WalkSparse(v, [&](int first, int run, int value) {
    if (value == 0) return;
    for (int i = first; i < first + run; i++) {
      if (value > max[i]) max[i] = static_cast<uint8_t>(value);
    }
  });
}

bool DescribeSparse(std::string_view v, std::string* out) {
  out->clear();
  const auto* p = reinterpret_cast<const uint8_t*>(v.data()) + kHeaderSize;
  const auto* end = reinterpret_cast<const uint8_t*>(v.data()) + v.size();
  while (p < end) {
    if (!out->empty()) out->push_back(' ');
    if (IsZero(*p)) {
      *out += "z:" + std::to_string(ZeroRun(*p));
      p++;
    } else if (IsXZero(*p)) {
      if (p + 1 >= end) return false;
      *out += "Z:" + std::to_string(XZeroRun(p));
      p += 2;
    } else {
      *out += "v:" + std::to_string(ValValue(*p)) + "," + std::to_string(ValRun(*p));
      p++;
    }
  }
  return true;
}

uint64_t CountRegisters(const uint8_t* regs) {
  int histo[64] = {0};
  for (int i = 0; i < kRegisters; i++) histo[regs[i] & 63]++;
  return FromHistogram(histo);
}

bool Count(std::string_view v, uint64_t* out) {
  int histo[64] = {0};
  if (EncodingOf(v) == kDense) {
    const auto* regs = reinterpret_cast<const uint8_t*>(v.data()) + kHeaderSize;
    ForEachDense(regs, [&](int, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
      histo[a]++;
      histo[b]++;
      histo[c]++;
      histo[d]++;
    });
  } else if (!WalkSparse(v, [&](int, int run, int value) { histo[value] += run; })) {
    return false;
  }
  *out = FromHistogram(histo);
  return true;
}

bool CachedCount(std::string_view v, uint64_t* out) {
  const auto* card = reinterpret_cast<const uint8_t*>(v.data()) + 8;
  if (card[7] & 0x80) return false;
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = (n << 8) | card[i];
  *out = n;
  return true;
}

void SetCachedCount(char* header, uint64_t n) {
  for (int i = 0; i < 8; i++) header[8 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
}

void InvalidateCache(char* header) { header[15] = static_cast<char>(header[15] | 0x80); }

}  // namespace strata::hll
