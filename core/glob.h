// Redis-compatible glob matching (KEYS, SCAN MATCH, CONFIG GET, CLIENT filters).
//
// Supports * ? [abc] [^a] [a-z] and backslash escapes, with Redis's semantics for
// malformed patterns (an unterminated '[' matches up to the end of the pattern).
// Thread-safety: pure function.
#pragma once

#include <string_view>

namespace strata {

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase = false);

}  // namespace strata
