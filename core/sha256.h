// SHA-256 (FIPS 180-4): ACL passwords are kept and compared as the SHA-256 of each, as
// Redis keeps them (ACL GETUSER shows the hex digests, `#<hex>` sets one).
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

std::array<uint8_t, 32> Sha256(std::string_view data);
// The 64 lowercase hex digits of Sha256(data).
std::string Sha256Hex(std::string_view data);

}  // namespace strata
