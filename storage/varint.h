// The integer encodings of snapshot files (docs/FORMAT.md, opening lines): unsigned LEB128
// varints, little-endian u64, and length-prefixed bytes. Getters advance *pos and return
// false on truncated or malformed input, never reading past the end.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

void PutVarint(std::string* out, uint64_t v);
bool GetVarint(std::string_view s, size_t* pos, uint64_t* v);
void PutFixed64(std::string* out, uint64_t v);
bool GetFixed64(std::string_view s, size_t* pos, uint64_t* v);
void PutBytes(std::string* out, std::string_view b);
bool GetBytes(std::string_view s, size_t* pos, std::string_view* out);

}  // namespace strata
