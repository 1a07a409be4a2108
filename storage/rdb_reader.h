// RdbReader: reads a whole RDB file (Redis 1.x to 7.4's versions 1-12, and Valkey 9's
// "VALKEY080" header) record by record (docs/FORMAT.md "RDB").
//
// The caller hands the file's bytes (a MappedFile's view) and pulls records with Next():
// auxiliary fields, database switches and size hints, keys with their value, expiry,
// LRU idle time and LFU frequency, functions, module aux data and slot info, and last
// the end. The checksum is computed as the records are read and compared at the end
// (not when the footer is zero: the writer had `rdbchecksum no`); bytes after the
// footer are ignored, as Redis does. Any damage - a truncation, an unknown opcode or type
// id, a malformed value, a wrong checksum - fails Next() with an error naming the byte
// offset and what was expected there, and the reader stays failed. A caller that must
// not half-load checks the whole file first (Verify) or discards what it loaded.
//
// Thread-safety: none; one reader per thread. Records are valid until the next Next().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "storage/crc64.h"
#include "storage/rdb_input.h"
#include "storage/rdb_value.h"

namespace strata::rdb {

struct RdbRecord {
  enum class Kind : uint8_t {
    kAux,        // name, text
    kSelectDb,   // db
    kResizeDb,   // db_size, expires_size
    kKey,        // db, name (the key), value, expire_ms, idle_s, freq; empty for "empty keys"
    kFunction,   // text (the library's code)
    kModuleAux,  // module (name); only with skip_modules
    kSlotInfo,   // slot, db_size, expires_size
    kSkipped,    // a key the keep predicate declined: db, name; its value was stepped over
    kEnd,
  };
  Kind kind = Kind::kEnd;
  uint64_t offset = 0;  // where the record starts
  uint32_t db = 0;
  std::string name;
  std::string text;
  std::string module;
  RdbValue value;          // kKey, unless the reader does not decode
  uint8_t type_id = 0;     // kKey, kSkipped: the value's type id
  std::string_view raw;    // kKey, kSkipped: the value's bytes in the file (after the key)
  bool empty = false;      // kKey: an empty collection, which loaders skip as Redis does
  int64_t expire_ms = -1;  // kKey: absolute unix ms, -1 for none
  int64_t idle_s = -1;     // kKey: OBJECT IDLETIME when saved under an LRU policy
  int freq = -1;           // kKey: the LFU counter when saved under an LFU policy
  uint64_t db_size = 0;
  uint64_t expires_size = 0;
  uint64_t slot = 0;
};

class RdbReader {
 public:
  struct Options {
    bool skip_modules = false;    // skip module values and aux data instead of refusing
    bool verify_checksum = true;  // false: `rdbchecksum no` on the reading side
    uint64_t max_string_bytes = uint64_t{512} << 20;
    // When set, only keys it returns true for are decoded; the others come back as
    // kSkipped with their value stepped over (framing checked, containers not decoded).
    std::function<bool(uint32_t db, std::string_view key)> keep;
    // false: keys come back with their raw bytes and type id only, stepped over by their
    // framing (a tool that passes values on as DUMP payloads, which the target checks).
    bool decode = true;
  };

  RdbReader(std::string_view data, const Options& opts);

  // Reads the header; false (error()) for a file that is not an RDB or whose version is
  // unknown.
  bool ReadHeader();
  // The next record; false on damage (error()). After kEnd, Next() is not called again.
  bool Next(RdbRecord* rec);

  int version() const { return version_; }
  bool valkey() const { return valkey_; }
  // After kEnd: whether a checksum was compared (false when the footer was zero, the
  // version had none, or checking was off).
  bool checksum_verified() const { return checksum_verified_; }
  // After kEnd: the footer as read (0 with checksums off or before version 5) and the
  // offset just past the EOF opcode (the checksum covers the bytes before it): for a
  // caller that checks the checksum itself (verify_checksum false).
  uint64_t footer() const { return footer_; }
  uint64_t checksum_end() const { return crc_end_; }
  uint64_t offset() const { return in_.offset(); }
  uint64_t size() const { return data_.size(); }
  const std::string& error() const { return in_.error(); }

  // Reads the whole file and returns the first damage, or "" when it is whole
  // (the keys are decoded and discarded).
  static std::string Verify(std::string_view data, const Options& opts);

 private:
  bool ReadKey(uint8_t type, uint64_t start, RdbRecord* rec);
  void TakeCrc();

  std::string_view data_;
  Options opts_;
  RdbInput in_;
  DecodeOptions decode_;
  int version_ = 0;
  bool valkey_ = false;
  uint32_t db_ = 0;
  uint64_t crc_ = 0;
  size_t crc_pos_ = 0;
  bool checksum_verified_ = false;
  uint64_t footer_ = 0;
  uint64_t crc_end_ = 0;
  bool ended_ = false;
};

}  // namespace strata::rdb
