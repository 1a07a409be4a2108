// One RDB value (the bytes after a key in a file, or a DUMP payload's body): decoded
// from any type id Redis 1.x to 7.4 writes into strata's form, and encoded from
// strata's form the way Redis 7 would write it (docs/FORMAT.md "RDB").
//
// Decoding turns every container (ziplist, listpack, zipmap, intset, quicklist nodes)
// into strata's canonical serialized form (core/object.h): strings as they are, lists,
// hashes and sorted sets as packed lists, small integer sets as intsets, so the loader
// stores a value with Keyspace::SetRaw in whatever encoding its size calls for. Every
// decode validates the value in full (Redis's deep sanitization): lengths, counts,
// duplicate members or fields, NaN scores, empty collections. Streams and module values
// have no strata type yet: a stream is decoded into RdbStream (so it is checked, and
// can be listed), a MODULE_2 value is skipped over its opcodes and named.
//
// Encoding chooses Redis 7.0's encodings by the same thresholds strata uses
// (EncodingLimits): listpacks and intsets for small collections, quicklist 2 for lists,
// ZSET_2 and plain hashes and sets for big ones; SET_LISTPACK only from version 11.
//
// Thread-safety: pure functions; any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/entry.h"
#include "storage/rdb_input.h"

namespace strata::rdb {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;
  bool operator==(const StreamId& o) const { return ms == o.ms && seq == o.seq; }
  bool operator<(const StreamId& o) const { return ms != o.ms ? ms < o.ms : seq < o.seq; }
  std::string ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }
};

struct RdbStream {
  struct Entry {
    StreamId id;
    std::vector<std::pair<std::string, std::string>> fields;
  };
  struct Pending {
    StreamId id;
    int64_t delivery_ms = 0;
    uint64_t delivery_count = 0;
  };
  struct Consumer {
    std::string name;
    int64_t seen_ms = 0;
    int64_t active_ms = -1;  // -1: not recorded (before stream type 3)
    std::vector<StreamId> pending;
  };
  struct Group {
    std::string name;
    StreamId last_id;
    int64_t entries_read = -1;  // -1: not recorded (stream type 1)
    std::vector<Pending> pel;
    std::vector<Consumer> consumers;
  };
  std::vector<Entry> entries;
  uint64_t length = 0;
  StreamId last_id;
  StreamId first_id;
  StreamId max_deleted_id;
  uint64_t entries_added = 0;
  std::vector<Group> groups;
};

enum class RdbKind : uint8_t { kString, kList, kSet, kZSet, kHash, kStream, kModule };
const char* RdbKindName(RdbKind k);

struct RdbValue {
  uint8_t type_id = 0;
  RdbKind kind = RdbKind::kString;
  // kString: the bytes; kList/kSet/kZSet/kHash/kStream: the canonical serialized form.
  std::string data;
  size_t elements = 0;  // members, fields, elements or stream entries; 1 for a string
  // Hashes with field expiry (types 22 to 25): each field's absolute expiry in ms, in
  // the order of `data`'s fields, 0 for none. Empty when no field has one.
  std::vector<int64_t> field_expire_ms;
  std::unique_ptr<RdbStream> stream;  // kStream
  std::string module_name;            // kModule
  // strata's type for the kinds it stores. REQUIRES: kind <= kHash.
  ValueType value_type() const;
};

struct DecodeOptions {
  // A module value (MODULE_2) is skipped and returned as kModule instead of refused.
  bool skip_modules = false;
};

enum class DecodeResult : uint8_t {
  kOk,
  kEmpty,  // a well-formed empty collection: Redis skips these in files, RESTORE refuses them
  kError,  // in->error() names the offset and what was expected there
};

// strata's canonical form of a decoded stream (core/stream_type.h); false with *error
// when the parts do not make a stream (a PEL entry without an owner, IDs out of order).
bool StreamCanonicalForm(const RdbStream& s, std::string* out, std::string* error);

// Decodes the value of type id `type` at in's cursor into *out (which it overwrites).
DecodeResult DecodeValue(uint8_t type, RdbInput* in, const DecodeOptions& opts, RdbValue* out);

// Steps over the value of type id `type` checking only its framing (lengths, counts,
// the bytes they claim): for a loader that keeps only some keys (each shard of a
// parallel load keeps the keys it owns and skips the rest). Containers are not decoded.
bool SkipValue(uint8_t type, RdbInput* in);

// For a hash with field expiry (field_expire_ms not empty): removes the fields whose
// expiry is at or before now_ms, and returns how many fields still carry one (strata
// has no per-field expiry, so a caller refuses or reports those). elements is 0 when
// every field was expired.
size_t DropExpiredFields(RdbValue* v, int64_t now_ms);

// Skips a module's opcode-typed payload (MODULE_2 values, MODULE_AUX) up to its EOF.
bool SkipModulePayload(RdbInput* in);

struct EncodeOptions {
  int version = 10;         // 10: Redis 7.0's types; 11 adds SET_LISTPACK
  bool compression = true;  // rdbcompression: LZF for strings over 20 bytes
  // Thresholds for the compact encodings (Redis's config names; core/object.h).
  int64_t hash_max_listpack_entries = 512;
  int64_t hash_max_listpack_value = 64;
  int64_t set_max_intset_entries = 512;
  int64_t set_max_listpack_entries = 128;
  int64_t set_max_listpack_value = 64;
  int64_t zset_max_listpack_entries = 128;
  int64_t zset_max_listpack_value = 64;
  int64_t list_max_listpack_size = -2;
  // The current values of strata's EncodingLimits.
  static EncodeOptions FromLimits(int version, bool compression);
};

// Appends the type id and the value of a strata value (a string's bytes, or a
// collection's canonical form) and returns the type id used.
uint8_t EncodeValue(ValueType type, std::string_view data, const EncodeOptions& opts,
                    std::string* out);

// The primitives of the writer: a length, a string (integer-encoded or LZF-compressed
// where Redis would), a binary double, a little-endian integer.
void AppendLength(std::string* out, uint64_t len);
void AppendString(std::string* out, std::string_view s, bool compression);
void AppendBinaryDouble(std::string* out, double d);
void AppendLE(std::string* out, uint64_t v, int bytes);

}  // namespace strata::rdb
