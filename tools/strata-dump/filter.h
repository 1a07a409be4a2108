// Filter: which keys a strata-dump verb handles - every verb takes the same filters:
// --match GLOB (repeatable; a key matching any is kept), --type (repeatable), --db
// (repeatable), --exclude-expired.
//
// Thread-safety: read-only after parsing; any thread.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tools/strata-dump/item.h"

namespace strata::dump {

struct Filter {
  std::vector<std::string> match;
  std::set<std::string> types;  // string, list, set, zset, hash, stream, module
  std::set<uint32_t> dbs;
  bool exclude_expired = false;

  bool empty() const { return match.empty() && types.empty() && dbs.empty() && !exclude_expired; }
  // Checks only the database (before a key is read).
  bool WantsDb(uint32_t db) const { return dbs.empty() || dbs.count(db) > 0; }
  bool Keeps(const Item& item, int64_t now_ms) const;
  // "" or why a --type value is unknown.
  static std::string CheckType(const std::string& t);
};

// The type name (TYPE's reply) of an RDB type id.
const char* TypeOfId(uint8_t type_id);

}  // namespace strata::dump
