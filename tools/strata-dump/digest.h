// Digest: what verify compares for a key - its type, a 64-bit hash of its contents in a
// form that does not depend on the encoding (strings' bytes; lists' elements in order;
// sets' members, hashes' fields and values, sorted sets' members and scores, each
// sorted), and its expiry. Two servers holding the same data in different encodings
// (a listpack here, a hashtable there) give the same digest.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "tools/strata-dump/item.h"

namespace strata::dump {

struct KeyDigest {
  std::string type;  // TYPE's name
  uint64_t hash = 0;
  int64_t expire_ms = -1;
  uint64_t elements = 0;
};

// False with *error when the value does not decode.
bool DigestOf(const Item& item, KeyDigest* out, std::string* error);

}  // namespace strata::dump
