#include "server/net/resp_peek.h"

#include <bit>
#include <cstdint>
#include <cstring>

namespace strata {
namespace {

static_assert(std::endian::native == std::endian::little, "ReadLine matches words little-endian");

// Reads a length line "<digits>\r\n" at data[*at]: 1 to 9 digits, no sign, no leading
// zero. False when the line is incomplete or not of that form. With room for the longest
// line ahead, the digits are read with no bound check and the CRLF as one 16-bit word.
inline bool ReadLength(const char* data, size_t len, size_t* at, size_t* value) {
  // Ten digits at most are read (one too many ends the look), then two bytes.
  constexpr size_t kLongest = 10 + 2;
  const size_t start = *at;
  size_t i = start;
  size_t v = 0;
  if (len - start >= kLongest) [[likely]] {
    unsigned d;
    while (i - start < 10 && (d = static_cast<unsigned char>(data[i]) - unsigned{'0'}) <= 9) {
      v = v * 10 + d;
      i++;
    }
    uint16_t crlf;
    std::memcpy(&crlf, data + i, sizeof(crlf));
    if (i == start || i - start > 9 || crlf != uint16_t{'\r' | '\n' << 8}) return false;
  } else {
    while (i < len && data[i] >= '0' && data[i] <= '9') {
      if (i - start == 9) return false;
      v = v * 10 + static_cast<size_t>(data[i] - '0');
      i++;
    }
    if (i == start || len - i < 2 || data[i] != '\r' || data[i + 1] != '\n') return false;
  }
  if (data[start] == '0' && i - start > 1) return false;  // a leading zero
  *at = i + 2;
  *value = v;
  return true;
}

// A line "<lead><length>\r\n" at data[*at] (lead '*' or '$'), moving *at past it. The
// lengths of most requests have one to three digits: with eight bytes ahead, those are
// matched as one word against the line's fixed bytes; any other line is read as above.
inline bool ReadLine(const char* data, size_t len, size_t* at, char lead, size_t* value) {
  size_t i = *at;
  if (len - i >= 8) [[likely]] {
    uint64_t w;
    std::memcpy(&w, data + i, sizeof(w));
    const uint64_t head = static_cast<unsigned char>(lead);
    const uint64_t d0 = ((w >> 8) & 0xff) - '0';  // wraps above 9 below '0'
    if ((w & 0xffff00ffULL) == (head | 0x0a0d0000ULL) && d0 <= 9) {
      *value = d0;
      *at = i + 4;
      return true;
    }
    const uint64_t d1 = ((w >> 16) & 0xff) - '0';
    if ((w & 0xffff0000ffULL) == (head | 0x0a0d000000ULL) && d0 - 1 <= 8 && d1 <= 9) {
      *value = d0 * 10 + d1;
      *at = i + 5;
      return true;
    }
    const uint64_t d2 = ((w >> 24) & 0xff) - '0';
    if ((w & 0xffff000000ffULL) == (head | 0x0a0d00000000ULL) && d0 - 1 <= 8 && d1 <= 9 &&
        d2 <= 9) {
      *value = (d0 * 10 + d1) * 10 + d2;
      *at = i + 6;
      return true;
    }
  }
  if (i >= len || data[i] != lead) return false;
  *at = i + 1;
  return ReadLength(data, len, at, value);
}

}  // namespace

size_t PeekSecondArgs(const char* data, size_t len, size_t max, std::string_view* out) {
  size_t at = 0;
  size_t n = 0;
  while (n < max && at < len) {
    size_t i = at;
    size_t argc;
    if (!ReadLine(data, len, &i, '*', &argc) || argc > kPeekArgsMax) break;
    std::string_view second;
    size_t a = 0;
    for (; a < argc; a++) {
      size_t blen;
      if (!ReadLine(data, len, &i, '$', &blen) || len - i < blen + 2) break;
      if (a == 1) second = std::string_view(data + i, blen);
      i += blen + 2;
    }
    if (a < argc) break;  // incomplete, or not canonical
    out[n++] = second;
    at = i;
  }
  return n;
}

}  // namespace strata
