// Ascii7: lossless packing of 7-bit ASCII text, 16 characters in 14 bytes.
//
// Format (chosen so that a group decodes with a handful of SSE2 instructions):
//   The text is cut into groups of 16 characters. A whole group is stored as 14 bytes:
//   byte i (0..13) holds character i in its low 7 bits; the 14 high bits of those bytes
//   hold characters 14 and 15 (bit 7 of byte i is bit i of the 14-bit number
//   c14 | c15 << 7). A final partial group of r < 16 characters is stored as r raw bytes
//   when r <= 14, and as a 14-byte group (characters past r zero) when r is 15.
//   The caller keeps the original length (the entry header), which is what makes the
//   last group decodable. 100 characters take 88 bytes.
//   Decoding a group: load 16 bytes, take the sign-bit mask (movemask), clear the high
//   bits, put the two characters from the mask in lanes 14 and 15. Encoding is the
//   reverse, and its sign-bit mask doubles as the "is this ASCII" check.
//   Builds without SSE2 use a portable path that produces the same bytes.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::ascii7 {

// Bytes that n characters pack into.
constexpr size_t PackedSize(size_t n) {
  size_t r = n % 16;
  return n / 16 * 14 + (r <= 14 ? r : 14);
}

// True when every byte of s is below 0x80.
bool IsAscii(std::string_view s);

// Packs s (REQUIRES: IsAscii(s)) into dst, which holds PackedSize(s.size()) bytes.
void Pack(std::string_view s, char* dst);

// Unpacks n characters from src (PackedSize(n) bytes) into dst (n bytes).
void Unpack(const char* src, size_t n, char* dst);

namespace detail {
// The portable implementations (also used to check the vector ones).
void PackPortable(std::string_view s, char* dst);
void UnpackPortable(const char* src, size_t n, char* dst);
}  // namespace detail

}  // namespace strata::ascii7
