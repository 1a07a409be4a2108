// Error replies the command families share, in Redis's exact wording.
// Thread-safety: constants and pure functions.
#pragma once

#include <string>
#include <string_view>

namespace strata {

namespace errors {
inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kSameObject = "ERR source and destination objects are the same";
}  // namespace errors

// "ERR invalid expire time in '<cmd>' command".
std::string InvalidExpireError(std::string_view cmd);

}  // namespace strata
