// Ascii7: lossless packing of 7-bit ASCII text into 7 bits per character.
//
// A value whose every byte is below 0x80 (printable text, JSON, numbers, most keys'
// payloads) is stored as ceil(n * 7 / 8) bytes: each group of 8 characters becomes 7
// bytes, the 7 low bits of every character concatenated little-endian. The original
// length is kept by the caller (the entry header), which is what makes the last partial
// group decodable. Encoding and decoding are a few shifts and masks per 8 bytes, with
// no table and no branch per character.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::ascii7 {

// Bytes that n characters pack into.
constexpr size_t PackedSize(size_t n) { return (n * 7 + 7) / 8; }

// True when every byte of s is below 0x80.
bool IsAscii(std::string_view s);

// Packs s (REQUIRES: IsAscii(s)) into dst, which holds PackedSize(s.size()) bytes.
void Pack(std::string_view s, char* dst);

// Unpacks n characters from src (PackedSize(n) bytes) into dst (n bytes).
void Unpack(const char* src, size_t n, char* dst);

}  // namespace strata::ascii7
