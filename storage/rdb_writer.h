// RdbWriter: writes an RDB file that Redis loads - version 10 by default (Redis 7.0 and
// later), 11 or 12 on request - with Redis's compact encodings (rdb_value.h) and its
// CRC-64 footer (docs/FORMAT.md "RDB").
//
// The writer streams: records are appended to output(), which a caller writing a big
// file takes (TakeOutput) and writes out as it grows; the checksum covers every byte
// taken. Order of calls: Header, then per database SelectDb and its keys, functions
// anywhere before End, then End.
//
// Thread-safety: a writer belongs to the thread that fills it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/entry.h"
#include "storage/rdb_value.h"

namespace strata::rdb {

class RdbWriter {
 public:
  struct Options {
    EncodeOptions encode;  // version and compression are encode.version/compression
    bool checksum = true;  // false: a zero footer, as `rdbchecksum no` writes
  };
  explicit RdbWriter(const Options& opts);

  // "REDIS00vv" and the aux fields Redis writes (redis-ver, redis-bits, ctime, used-mem,
  // aof-base).
  void Header(std::string_view redis_ver, int64_t ctime_s, uint64_t used_mem);
  void Aux(std::string_view name, std::string_view value);
  // SELECTDB, then RESIZEDB with the database's key and expiry counts.
  void SelectDb(uint32_t db, uint64_t db_size, uint64_t expires_size);
  // A function library's code (FUNCTION2).
  void Function(std::string_view code);
  // One key: strata's value (a string, or a collection's canonical form), its absolute
  // expiry in ms or Entry::kNoExpire/-1, and optionally its LRU idle seconds or LFU
  // counter (-1 for none).
  void Key(ValueType type, std::string_view key, std::string_view data, int64_t expire_ms,
           int64_t idle_s = -1, int freq = -1);
  // A key whose value is already in RDB encoding: its type id and value bytes as a file
  // or a DUMP payload had them (strata-dump passes values on without decoding them).
  void RawKey(uint8_t type_id, std::string_view key, std::string_view value, int64_t expire_ms,
              int64_t idle_s = -1, int freq = -1);
  // EOF and the footer. The writer is spent afterwards.
  void End();

  // Bytes not yet taken. A streaming caller takes them with TakeOutput.
  const std::string& output() const { return out_; }
  std::string TakeOutput();
  uint64_t keys() const { return keys_; }
  uint64_t bytes_written() const { return taken_ + out_.size(); }

 private:
  void Checksum();
  void KeyPrefix(int64_t expire_ms, int64_t idle_s, int freq);
  Options opts_;
  std::string out_;
  uint64_t crc_ = 0;
  size_t crc_pos_ = 0;  // out_'s bytes before this are in crc_
  uint64_t taken_ = 0;
  uint64_t keys_ = 0;
};

}  // namespace strata::rdb
