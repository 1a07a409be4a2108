// Number parsing and formatting with Redis's exact rules.
//
// Redis accepts an integer only in its canonical form (no '+', no leading zeros, no
// spaces), and prints doubles for INCRBYFLOAT with up to 17 significant digits and no
// trailing zeros. These helpers reproduce that so replies match byte for byte.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

// Canonical signed 64-bit integer, as Redis's string2ll.
bool ParseInt64(std::string_view s, int64_t* out);
// Unsigned variant for cursors.
bool ParseUint64(std::string_view s, uint64_t* out);
// A double as Redis's string2ld/strtold accepts it: no spaces, no NaN, "inf" allowed.
bool ParseDouble(std::string_view s, double* out);
bool ParseLongDouble(std::string_view s, long double* out);

// How many decimal digits n has (RESP lengths are almost always short: the first tests
// answer them).
inline size_t DecimalDigits(uint64_t n) {
  if (n < 10) return 1;
  if (n < 100) return 2;
  if (n < 1000) return 3;
  if (n < 10000) return 4;
  size_t len = 5;
  for (n /= 100000; n != 0; n /= 10) len++;
  return len;
}

// Appends the decimal form of v.
void AppendInt(std::string* out, int64_t v);
std::string IntToString(int64_t v);

// Formats like Redis's ld2string(..., LD_STR_HUMAN): fixed notation with %.17Lf,
// trailing zeros and a trailing '.' removed. Used by INCRBYFLOAT.
std::string LongDoubleToHuman(long double v);
// Formats like Redis's addReplyDouble (%.17g), used for score-like doubles.
std::string DoubleToString(double v);

// "1gb", "512mb", "100k", "1024" → bytes, as Redis's memtoull. Case-insensitive units.
std::optional<uint64_t> ParseMemory(std::string_view s);

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Appends s double-quoted as Redis's sdscatrepr writes it (MONITOR's arguments, CONFIG
// REWRITE's values): \\ and \" escaped, \n \r \t \a \b, other bytes outside printable
// ASCII as \xHH. SplitArgs reads it back.
void AppendRepr(std::string* out, std::string_view s);
// Compares a guess with a secret (a password) in time that depends on the secret's
// length only: neither the guess's bytes nor its length change how long it takes.
bool ConstantTimeEquals(std::string_view guess, std::string_view secret);
void ToLower(std::string* s);
std::string Lowercase(std::string_view s);

}  // namespace strata
