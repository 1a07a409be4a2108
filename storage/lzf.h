// LZF, the compression of strings in RDB files and DUMP payloads (Redis's
// `rdbcompression`), in liblzf's format:
//   - a control byte c < 32 is followed by c + 1 literal bytes;
//   - otherwise it starts a back-reference: length (c >> 5) + 2, or, when c >> 5 is 7,
//     7 + 2 plus the next byte; offset ((c & 31) << 8 | next byte) + 1 back from the
//     end of the output so far.
// So a literal run is at most 32 bytes, a reference at most 264 bytes long and 8192 back.
//
// Decompress() checks every length and offset against the input and the expected
// output size, so a damaged or hostile input is an error, never a read or write out of
// bounds. Compress() is a greedy, hash-table encoder whose output any LZF decoder
// (Redis's included) reads; like liblzf it gives up when the output would not be
// smaller than `max_out`.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace strata::lzf {

// Decompresses `in` into exactly `out_len` bytes. Returns false (and leaves *error
// saying why, with the input offset) when the input is malformed or does not produce
// exactly out_len bytes.
bool Decompress(std::string_view in, size_t out_len, std::string* out, std::string* error);

// Compresses `in`; returns false when the result would be longer than max_out bytes
// (then *out is unspecified). Redis stores a string compressed only when that saves
// something, so callers pass max_out = in.size() - 1 or less.
bool Compress(std::string_view in, size_t max_out, std::string* out);

}  // namespace strata::lzf
