// RdbFileSink: writes items to an RDB file (version 10 by default, which Redis 7.0
// loads; 11 or 12 on request). Values pass through in the encoding their source had
// when the file's version defines it; a value whose type id is newer than the file's
// version (a 7.2 set listpack in a version 10 file) is decoded and written again in
// an older encoding, and a type with no older encoding is an error naming the key.
// The file is written under a temporary name and renamed when whole (fsynced), so a
// failed or interrupted dump never leaves a half file under the requested name.
//
// Thread-safety: one thread.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "storage/rdb_writer.h"
#include "tools/strata-dump/item.h"

namespace strata::dump {

class RdbFileSink {
 public:
  struct Options {
    int version = 10;
    bool compression = true;
    bool checksum = true;
    std::map<uint32_t, uint32_t> db_map;
  };
  ~RdbFileSink();
  bool Open(const std::string& path, const Options& opts, std::string* error);
  bool Add(const Item& item, std::string* error);
  // Writes the function libraries, the end and the footer; renames the file in place.
  bool Finish(const std::vector<std::string>& functions, std::string* error);
  uint64_t keys() const { return writer_ ? writer_->keys() : 0; }
  uint64_t bytes() const { return writer_ ? writer_->bytes_written() : 0; }

 private:
  bool Drain(std::string* error);
  Options opts_;
  std::string path_, tmp_;
  FILE* f_ = nullptr;
  std::unique_ptr<rdb::RdbWriter> writer_;
  int64_t db_ = -1;
};

}  // namespace strata::dump
