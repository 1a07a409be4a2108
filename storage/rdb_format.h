// The RDB format's numbers (docs/FORMAT.md "RDB"): versions, opcodes and value type ids,
// as Redis 7.4 defines them, and their names for messages.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace strata::rdb {

// Versions: Redis 7.0 writes 10, 7.2 writes 11, 7.4 writes 12. Valkey 8 writes 11;
// Valkey 9 writes "VALKEY" and three digits (80).
constexpr int kMinVersion = 1;
constexpr int kMaxRedisVersion = 12;
constexpr int kDefaultWriteVersion = 10;
constexpr int kValkeyMinVersion = 80;
constexpr int kValkeyMaxVersion = 80;

// Opcodes (a byte where a value type id would be).
constexpr uint8_t kOpSlotInfo = 244;
constexpr uint8_t kOpFunction2 = 245;
constexpr uint8_t kOpFunctionPreGa = 246;
constexpr uint8_t kOpModuleAux = 247;
constexpr uint8_t kOpIdle = 248;
constexpr uint8_t kOpFreq = 249;
constexpr uint8_t kOpAux = 250;
constexpr uint8_t kOpResizeDb = 251;
constexpr uint8_t kOpExpireTimeMs = 252;
constexpr uint8_t kOpExpireTime = 253;
constexpr uint8_t kOpSelectDb = 254;
constexpr uint8_t kOpEof = 255;

// Value type ids.
constexpr uint8_t kTypeString = 0;
constexpr uint8_t kTypeList = 1;
constexpr uint8_t kTypeSet = 2;
constexpr uint8_t kTypeZSet = 3;
constexpr uint8_t kTypeHash = 4;
constexpr uint8_t kTypeZSet2 = 5;
constexpr uint8_t kTypeModulePreGa = 6;
constexpr uint8_t kTypeModule2 = 7;
constexpr uint8_t kTypeHashZipmap = 9;
constexpr uint8_t kTypeListZiplist = 10;
constexpr uint8_t kTypeSetIntset = 11;
constexpr uint8_t kTypeZSetZiplist = 12;
constexpr uint8_t kTypeHashZiplist = 13;
constexpr uint8_t kTypeListQuicklist = 14;
constexpr uint8_t kTypeStreamListpacks = 15;
constexpr uint8_t kTypeHashListpack = 16;
constexpr uint8_t kTypeZSetListpack = 17;
constexpr uint8_t kTypeListQuicklist2 = 18;
constexpr uint8_t kTypeStreamListpacks2 = 19;
constexpr uint8_t kTypeSetListpack = 20;
constexpr uint8_t kTypeStreamListpacks3 = 21;
constexpr uint8_t kTypeHashMetadataPreGa = 22;
constexpr uint8_t kTypeHashListpackExPreGa = 23;
constexpr uint8_t kTypeHashMetadata = 24;
constexpr uint8_t kTypeHashListpackEx = 25;
constexpr uint8_t kMaxTypeId = 25;

// Quicklist 2 node containers.
constexpr uint64_t kQuicklistPlain = 1;
constexpr uint64_t kQuicklistPacked = 2;

// Module value opcodes (MODULE_2 values and MODULE_AUX payloads).
constexpr uint64_t kModuleOpEof = 0;
constexpr uint64_t kModuleOpSint = 1;
constexpr uint64_t kModuleOpUint = 2;
constexpr uint64_t kModuleOpFloat = 3;
constexpr uint64_t kModuleOpDouble = 4;
constexpr uint64_t kModuleOpString = 5;

// True for the byte values a value type id may take (0-7, 9-25).
inline bool IsValueType(uint8_t t) { return t <= kMaxTypeId && t != 8; }
// The oldest RDB version that defines type id t (for a DUMP payload's version).
int MinVersionForType(uint8_t t);
// "string", "list-quicklist2", ... for messages and strata-dump inspect.
const char* TypeIdName(uint8_t t);
// A module type's 9-character name from its 64-bit id (the top 54 bits, 6 per
// character), and its encoding version (the low 10 bits).
std::string ModuleTypeName(uint64_t module_id);

}  // namespace strata::rdb
