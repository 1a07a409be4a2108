// SHA-1 (FIPS 180-4), for what names things by it: Lua scripts are cached and called by
// the SHA-1 of their body (EVALSHA, SCRIPT LOAD), as in Redis. Not for security.
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

std::array<uint8_t, 20> Sha1(std::string_view data);
// The 40 lowercase hex digits of Sha1(data).
std::string Sha1Hex(std::string_view data);

}  // namespace strata
