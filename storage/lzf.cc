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

inline uint32_t Hash3(const unsigned char* p, int bits) {
  uint32_t v = static_cast<uint32_t>(p[0]) << 16 | static_cast<uint32_t>(p[1]) << 8 | p[2];
  return (v * 2654435761u) >> (32 - bits);
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
  auto* op0 = reinterpret_cast<unsigned char*>(out->data());
  unsigned char* op = op0;
  unsigned char* const op_end = op0 + max_out;
  int bits = kMinHashBits;
  while (bits < kMaxHashBits && (size_t{1} << bits) < 2 * n) bits++;
  // Slots hold position + 1; 0 is empty.
  uint32_t small[size_t{1} << kMinHashBits];
  std::vector<uint32_t> big;
  uint32_t* table = small;
  if (bits > kMinHashBits) {
    big.assign(size_t{1} << bits, 0);
    table = big.data();
  } else {
    std::memset(small, 0, sizeof(small));
  }
  size_t lit_start = 0;  // first byte of the pending literal run
  auto flush_literals = [&](size_t end) {
    while (lit_start < end) {
      size_t run = std::min(kMaxLiteral, end - lit_start);
      *op++ = static_cast<unsigned char>(run - 1);
      std::memcpy(op, ip + lit_start, run);
      op += run;
      lit_start += run;
    }
  };
  auto pending_fits = [&](size_t upto) {
    size_t lit = upto - lit_start;
    return op + lit + (lit + kMaxLiteral - 1) / kMaxLiteral <= op_end;
  };
  size_t i = 0;
  const int shift = 32 - bits;
  uint32_t v = n >= 2 ? static_cast<uint32_t>(ip[0]) << 8 | ip[1] : 0;  // rolling 3 bytes
  while (i + 2 < n) {
    v = (v << 8 | ip[i + 2]) & 0xffffff;
    uint32_t h = (v * 2654435761u) >> shift;
    uint32_t slot = table[h];
    table[h] = static_cast<uint32_t>(i + 1);
    size_t cand = slot - 1;
    if (slot != 0 && i - cand <= kMaxOffset && ip[cand] == ip[i] && ip[cand + 1] == ip[i + 1] &&
        ip[cand + 2] == ip[i + 2]) {
      size_t len = 3;
      size_t limit = std::min(kMaxRef, n - i);
      while (len < limit && ip[cand + len] == ip[i + len]) len++;
      if (!pending_fits(i)) {
        out->clear();
        return false;
      }
      flush_literals(i);
      if (op + 3 > op_end) {
        out->clear();
        return false;
      }
      size_t back = i - cand - 1;
      size_t l = len - 2;
      if (l < 7) {
        *op++ = static_cast<unsigned char>(l << 5 | back >> 8);
      } else {
        *op++ = static_cast<unsigned char>(7 << 5 | back >> 8);
        *op++ = static_cast<unsigned char>(l - 7);
      }
      *op++ = static_cast<unsigned char>(back & 0xff);
      // Index the bytes the reference covers (a few, for the next matches).
      for (size_t k = 1; k < len && i + k + 2 < n; k++) {
        table[Hash3(ip + i + k, bits)] = static_cast<uint32_t>(i + k + 1);
      }
      i += len;
      lit_start = i;
      if (i + 1 < n) v = static_cast<uint32_t>(ip[i]) << 8 | ip[i + 1];
    } else {
      i++;
      if (((i - lit_start) & 15) == 0 && !pending_fits(i)) {
        out->clear();
        return false;
      }
    }
  }
  if (!pending_fits(n)) {
    out->clear();
    return false;
  }
  flush_literals(n);
  out->resize(static_cast<size_t>(op - op0));
  return true;
}

}  // namespace strata::lzf
