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
constexpr int kHashBits = 14;

std::string At(size_t offset, const char* what) {
  return "LZF data damaged at byte " + std::to_string(offset) + ": " + what;
}

inline uint32_t Hash3(const unsigned char* p) {
  uint32_t v = static_cast<uint32_t>(p[0]) << 16 | static_cast<uint32_t>(p[1]) << 8 | p[2];
  return (v * 2654435761u) >> (32 - kHashBits);
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
  out->clear();
  const auto* ip = reinterpret_cast<const unsigned char*>(in.data());
  const size_t n = in.size();
  std::vector<uint32_t> table(size_t{1} << kHashBits, UINT32_MAX);
  size_t lit_start = 0;  // first byte of the pending literal run
  auto flush_literals = [&](size_t end) {
    while (lit_start < end) {
      size_t run = std::min(kMaxLiteral, end - lit_start);
      out->push_back(static_cast<char>(run - 1));
      out->append(in.data() + lit_start, run);
      lit_start += run;
    }
  };
  size_t i = 0;
  while (i + 2 < n) {
    uint32_t h = Hash3(ip + i);
    uint32_t cand = table[h];
    table[h] = static_cast<uint32_t>(i);
    if (cand != UINT32_MAX && i - cand <= kMaxOffset && std::memcmp(ip + cand, ip + i, 3) == 0) {
      size_t len = 3;
      size_t limit = std::min(kMaxRef, n - i);
      while (len < limit && ip[cand + len] == ip[i + len]) len++;
      flush_literals(i);
      size_t back = i - cand - 1;
      size_t l = len - 2;
      if (l < 7) {
        out->push_back(static_cast<char>(l << 5 | back >> 8));
      } else {
        out->push_back(static_cast<char>(7 << 5 | back >> 8));
        out->push_back(static_cast<char>(l - 7));
      }
      out->push_back(static_cast<char>(back & 0xff));
      // Index the bytes the reference covers (a few, for the next matches).
      for (size_t k = 1; k < len && i + k + 2 < n; k++) {
        table[Hash3(ip + i + k)] = static_cast<uint32_t>(i + k);
      }
      i += len;
      lit_start = i;
    } else {
      i++;
    }
    if (out->size() > max_out) return false;
  }
  flush_literals(n);
  return out->size() <= max_out;
}

}  // namespace strata::lzf
