#include "tools/strata-dump/item.h"

#include "storage/crc64.h"
#include "storage/rdb_format.h"
#include "storage/rdb_value.h"

namespace strata::dump {

std::string Item::Payload() const {
  std::string p;
  p.reserve(value.size() + 11);
  p.push_back(static_cast<char>(type_id));
  p.append(value);
  rdb::AppendLE(&p, static_cast<uint64_t>(rdb::MinVersionForType(type_id)), 2);
  rdb::AppendLE(&p, crc64::Value(p), 8);
  return p;
}

}  // namespace strata::dump
