#include "storage/rdb_format.h"

namespace strata::rdb {

int MinVersionForType(uint8_t t) {
  switch (t) {
    case kTypeZSet2:
      return 8;
    case kTypeModule2:
      return 9;
    case kTypeListQuicklist:
      return 7;
    case kTypeStreamListpacks:
      return 9;
    case kTypeHashListpack:
    case kTypeZSetListpack:
    case kTypeListQuicklist2:
    case kTypeStreamListpacks2:
      return 10;
    case kTypeSetListpack:
    case kTypeStreamListpacks3:
      return 11;
    case kTypeHashMetadataPreGa:
    case kTypeHashListpackExPreGa:
    case kTypeHashMetadata:
    case kTypeHashListpackEx:
      return 12;
    default:
      return 6;  // the first version with DUMP payloads; the older ids are in it
  }
}

const char* TypeIdName(uint8_t t) {
  switch (t) {
    case kTypeString:
      return "string";
    case kTypeList:
      return "list-linkedlist";
    case kTypeSet:
      return "set-hashtable";
    case kTypeZSet:
      return "zset-skiplist";
    case kTypeHash:
      return "hash-hashtable";
    case kTypeZSet2:
      return "zset-skiplist2";
    case kTypeModulePreGa:
      return "module-pre-ga";
    case kTypeModule2:
      return "module";
    case kTypeHashZipmap:
      return "hash-zipmap";
    case kTypeListZiplist:
      return "list-ziplist";
    case kTypeSetIntset:
      return "set-intset";
    case kTypeZSetZiplist:
      return "zset-ziplist";
    case kTypeHashZiplist:
      return "hash-ziplist";
    case kTypeListQuicklist:
      return "list-quicklist";
    case kTypeStreamListpacks:
      return "stream";
    case kTypeHashListpack:
      return "hash-listpack";
    case kTypeZSetListpack:
      return "zset-listpack";
    case kTypeListQuicklist2:
      return "list-quicklist2";
    case kTypeStreamListpacks2:
      return "stream2";
    case kTypeSetListpack:
      return "set-listpack";
    case kTypeStreamListpacks3:
      return "stream3";
    case kTypeHashMetadataPreGa:
      return "hash-metadata-pre-ga";
    case kTypeHashListpackExPreGa:
      return "hash-listpack-ex-pre-ga";
    case kTypeHashMetadata:
      return "hash-metadata";
    case kTypeHashListpackEx:
      return "hash-listpack-ex";
    default:
      return "unknown";
  }
}

std::string ModuleTypeName(uint64_t module_id) {
  static constexpr char kCharset[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string name(9, '?');
  uint64_t id = module_id >> 10;
  for (int j = 8; j >= 0; j--) {
    name[static_cast<size_t>(j)] = kCharset[id & 63];
    id >>= 6;
  }
  return name;
}

}  // namespace strata::rdb
