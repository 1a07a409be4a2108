#include "storage/varint.h"

namespace strata {

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(std::string_view s, size_t* pos, uint64_t* v) {
  uint64_t r = 0;
  for (int shift = 0; *pos < s.size() && shift < 64; shift += 7) {
    uint8_t b = static_cast<uint8_t>(s[(*pos)++]);
    r |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      *v = r;
      return true;
    }
  }
  return false;
}

void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; i++) out->push_back(static_cast<char>(v >> (8 * i)));
}

bool GetFixed64(std::string_view s, size_t* pos, uint64_t* v) {
  if (*pos > s.size() || s.size() - *pos < 8) return false;
  uint64_t r = 0;
  for (int i = 0; i < 8; i++)
    r |= static_cast<uint64_t>(static_cast<uint8_t>(s[*pos + i])) << (8 * i);
  *pos += 8;
  *v = r;
  return true;
}

void PutBytes(std::string* out, std::string_view b) {
  PutVarint(out, b.size());
  out->append(b);
}

bool GetBytes(std::string_view s, size_t* pos, std::string_view* out) {
  uint64_t n = 0;
  if (!GetVarint(s, pos, &n) || n > s.size() - *pos) return false;
  *out = s.substr(*pos, n);
  *pos += n;
  return true;
}

}  // namespace strata
