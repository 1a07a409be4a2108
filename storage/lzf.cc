#include "storage/lzf.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace strata::lzf {

namespace {

constexpr size_t kMaxLiteral = 32;
constexpr size_t kMaxOffset = 1 << 13;
constexpr size_t kMaxRef = 264;  // 7 + 255 + 2
// The match table: at most 2^14 slots, and for a short input about two per byte (so a
// 100-byte value fills 256 slots, not 16384: the table's setup would cost more than
// the compression).
constexpr int kMaxHashBits = 14;
constexpr int kMinHashBits = 8;

std::string At(size_t offset, const char* what) {
  return "LZF data damaged at byte " + std::to_string(offset) + ": " + what;
}

inline uint32_t Bytes3(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) << 16 | static_cast<uint32_t>(p[1]) << 8 | p[2];
}

// Writes in[from, to) as literal runs at op; returns the end of what it wrote.
inline unsigned char* EmitLiterals(unsigned char* op, const unsigned char* in, size_t from,
                                   size_t to) {
  while (from < to) {
    size_t run = std::min(kMaxLiteral, to - from);
    *op++ = static_cast<unsigned char>(run - 1);
    std::memcpy(op, in + from, run);
    op += run;
    from += run;
  }
  return op;
}

}  // namespace

bool Decompress(std::string_view in, size_t out_len, std::string* out, std::string* error) {
  out->resize(out_len);
  auto* op = reinterpret_cast<unsigned char*>(out->data());
  const auto* ip = reinterpret_cast<const unsigned char*>(in.data());
  size_t i = 0, o = 0;
  while (i < in.size()) {
    size_t at = i;
    unsigned c = ip[i++];
    if (c < 32) {
      size_t n = c + 1;
      if (in.size() - i < n) {
        *error = At(at, "a literal run goes past the end of the input");
        return false;
      }
      if (out_len - o < n) {
        *error = At(at, "a literal run goes past the expected length");
        return false;
      }
      std::memcpy(op + o, ip + i, n);
      i += n;
      o += n;
      continue;
    }
    size_t len = c >> 5;
    if (len == 7) {
      if (i >= in.size()) {
        *error = At(at, "a back-reference's length is cut off");
        return false;
      }
      len += ip[i++];
    }
    if (i >= in.size()) {
      *error = At(at, "a back-reference's offset is cut off");
      return false;
    }
    size_t back = ((c & 0x1f) << 8 | ip[i++]) + 1;
    len += 2;
    if (back > o) {
      *error = At(at, "a back-reference points before the start of the output");
      return false;
    }
    if (out_len - o < len) {
      *error = At(at, "a back-reference goes past the expected length");
      return false;
    }
    // Byte by byte: a reference may overlap the bytes it produces (a run).
    for (size_t k = 0; k < len; k++, o++) op[o] = op[o - back];
  }
  if (o != out_len) {
    *error =
        "LZF data ends after " + std::to_string(o) + " of " + std::to_string(out_len) + " bytes";
    return false;
  }
  return true;
}

bool Compress(std::string_view in, size_t max_out, std::string* out) {
  const auto* ip = reinterpret_cast<const unsigned char*>(in.data());
  const size_t n = in.size();
  // Output goes into a buffer of max_out bytes (plus slack for one step); the run is
  // abandoned as soon as the literals pending alone would not fit.
  out->resize(max_out + kMaxLiteral + 8);
  auto* const op0 = reinterpret_cast<unsigned char*>(out->data());
  unsigned char* op = op0;
  unsigned char* const op_end = op0 + max_out;
  int bits = kMinHashBits;
  while (bits < kMaxHashBits && (size_t{1} << bits) < 2 * n) bits++;
  // A slot holds the 3 bytes at a position (high half) and the position + 1 (low
  // half); 0 is empty. A candidate is checked against the current 3 bytes by one
  // comparison with the slot, without reading the input at the candidate: on input that
  // does not compress, the loop then takes no branch it cannot predict.
  uint64_t small[size_t{1} << kMinHashBits];
  std::vector<uint64_t> big;
  uint64_t* table = small;
  if (bits > kMinHashBits) {
    big.assign(size_t{1} << bits, 0);
    table = big.data();
  } else {
    std::memset(small, 0, sizeof(small));
  }
  const int shift = 32 - bits;
  size_t lit_start = 0;  // first byte of the pending literal run
  // True when the literals pending up to `upto`, with their control bytes, still fit
  // after `at`.
  auto pending_fits = [op_end, &lit_start](const unsigned char* at, size_t upto) {
    size_t lit = upto - lit_start;
    return at + lit + (lit + kMaxLiteral - 1) / kMaxLiteral <= op_end;
  };
  size_t i = 0;
  uint32_t v = n >= 2 ? static_cast<uint32_t>(ip[0]) << 8 | ip[1] : 0;  // rolling 3 bytes
  while (i + 2 < n) {
    v = (v << 8 | ip[i + 2]) & 0xffffff;
    const uint32_t h = (v * 2654435761u) >> shift;
    const uint64_t key = uint64_t{v} << 32;
    // x - 1 is the candidate's position exactly when its bytes are v (high half 0) and
    // the slot was not empty (low half not 0).
    const uint64_t x = table[h] ^ key;
    table[h] = key | (i + 1);
    if (x - 1 < 0xffffffffu && i - (x - 1) <= kMaxOffset) [[unlikely]] {
      const size_t cand = x - 1;
      size_t len = 3;
      const size_t limit = std::min(kMaxRef, n - i);
      while (len < limit && ip[cand + len] == ip[i + len]) len++;
      if (!pending_fits(op, i)) {
        out->clear();
        return false;
      }
      op = EmitLiterals(op, ip, lit_start, i);
      if (op + 3 > op_end) {
        out->clear();
        return false;
      }
      const size_t back = i - cand - 1;
      const size_t l = len - 2;
      if (l < 7) {
        *op++ = static_cast<unsigned char>(l << 5 | back >> 8);
      } else {
        *op++ = static_cast<unsigned char>(7 << 5 | back >> 8);
        *op++ = static_cast<unsigned char>(l - 7);
      }
      *op++ = static_cast<unsigned char>(back & 0xff);
      // Index the bytes the reference covers (a few, for the next matches).
      for (size_t k = 1; k < len && i + k + 2 < n; k++) {
        const uint32_t w = Bytes3(ip + i + k);
        table[(w * 2654435761u) >> shift] = uint64_t{w} << 32 | (i + k + 1);
      }
      i += len;
      lit_start = i;
      if (i + 1 < n) v = static_cast<uint32_t>(ip[i]) << 8 | ip[i + 1];
    } else {
      i++;
      if (((i - lit_start) & 15) == 0 && !pending_fits(op, i)) {
        out->clear();
        return false;
      }
    }
  }
  if (!pending_fits(op, n)) {
    out->clear();
    return false;
  }
  op = EmitLiterals(op, ip, lit_start, n);
  out->resize(static_cast<size_t>(op - op0));
  return true;
}

}  // namespace strata::lzf
