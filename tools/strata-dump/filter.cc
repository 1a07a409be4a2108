#include "tools/strata-dump/filter.h"

#include "core/glob.h"
#include "storage/rdb_format.h"

namespace strata::dump {

const char* TypeOfId(uint8_t t) {
  using namespace rdb;
  switch (t) {
    case kTypeString:
      return "string";
    case kTypeList:
    case kTypeListZiplist:
    case kTypeListQuicklist:
    case kTypeListQuicklist2:
      return "list";
    case kTypeSet:
    case kTypeSetIntset:
    case kTypeSetListpack:
      return "set";
    case kTypeZSet:
    case kTypeZSet2:
    case kTypeZSetZiplist:
    case kTypeZSetListpack:
      return "zset";
    case kTypeStreamListpacks:
    case kTypeStreamListpacks2:
    case kTypeStreamListpacks3:
      return "stream";
    case kTypeModulePreGa:
    case kTypeModule2:
      return "module";
    default:
      return "hash";
  }
}

std::string Filter::CheckType(const std::string& t) {
  for (const char* k : {"string", "list", "set", "zset", "hash", "stream", "module"}) {
    if (t == k) return "";
  }
  return "unknown --type '" + t + "' (string, list, set, zset, hash, stream or module)";
}

bool Filter::Keeps(const Item& item, int64_t now_ms) const {
  if (!WantsDb(item.db)) return false;
  if (exclude_expired && item.expire_ms >= 0 && item.expire_ms <= now_ms) return false;
  if (!types.empty() && types.count(TypeOfId(item.type_id)) == 0) return false;
  if (match.empty()) return true;
  for (const std::string& g : match) {
    if (GlobMatch(g, item.key)) return true;
  }
  return false;
}

}  // namespace strata::dump
