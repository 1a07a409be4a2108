// Bitmaps: the bit arithmetic of SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP and BITFIELD
// over a string's bytes.
//
// Bit order is Redis's: bit i of a string is bit (7 - i % 8) of byte i / 8, so offset 0
// is the most significant bit of the first byte, and a BITFIELD integer is read most
// significant bit first from its offset. Bits past the end of a string read as 0.
//
// Counting uses the CPU's popcnt instruction when it has one (checked once at run
// time), 8 bytes at a time; searching skips whole 8-byte words that cannot hold the bit;
// combining works a word at a time. Every function is linear in the bytes it covers.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace strata::bitmap {

// The byte holding bit i, and the bit's mask in it.
constexpr uint64_t ByteOf(uint64_t bit) { return bit >> 3; }
constexpr uint8_t MaskOf(uint64_t bit) { return static_cast<uint8_t>(0x80u >> (bit & 7)); }

// Bit i of s (0 past its end).
inline int GetBit(std::string_view s, uint64_t i) {
  uint64_t b = ByteOf(i);
  if (b >= s.size()) return 0;
  return (static_cast<uint8_t>(s[b]) & MaskOf(i)) != 0;
}

// Set bits in s.
uint64_t Count(std::string_view s);

// Set bits among bits first..last of s. REQUIRES: first <= last < 8 * s.size().
uint64_t CountRange(std::string_view s, uint64_t first, uint64_t last);

// The first bit equal to `bit` (0 or 1) among bits first..last of s; -1 when there is
// none. REQUIRES: first <= last < 8 * s.size().
int64_t FindRange(std::string_view s, uint64_t first, uint64_t last, int bit);

enum class Op : uint8_t { kAnd, kOr, kXor, kNot };

// dst[0..n) = op over srcs, each read as if zero-padded to n bytes (NOT: srcs[0]
// only). REQUIRES: srcs not empty.
void Combine(Op op, const std::vector<std::string_view>& srcs, size_t n, char* dst);

// BITFIELD's integers of 1..64 bits at a bit offset.
// The `bits`-bit field at bit `offset` of s, as an unsigned number (bits past the end of
// s read 0).
uint64_t GetField(std::string_view s, uint64_t offset, int bits);
// Writes the low `bits` bits of v at bit `offset` of s. REQUIRES: the field lies inside
// s's n bytes.
void SetField(char* s, size_t n, uint64_t offset, int bits, uint64_t v);
// A field's unsigned bits read as a two's-complement signed number.
int64_t SignExtend(uint64_t v, int bits);

enum class Overflow : uint8_t { kWrap, kSat, kFail };

// value + incr for a field of `bits` bits, signed (value is then the int64's bits) or
// unsigned (bits <= 63). Returns true with the sum in *out when it fits; false when it
// overflows, with *out the wrapped (kWrap) or saturated (kSat) result (kFail: unset).
// SET checks its value with incr 0.
bool AddField(bool is_signed, int bits, uint64_t value, int64_t incr, Overflow ov, uint64_t* out);

}  // namespace strata::bitmap
