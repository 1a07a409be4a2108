// SnapshotRdbEncoder: a full snapshot's shard files read back as one RDB stream - what a
// master sends a replica in a full resync (server/persistence/repl_master.h).
//
// The files are mapped read-only and read in turn with ShardSnapshotReader; each record
// becomes an RDB key (RdbWriter, Redis's compact encodings), with SELECTDB whenever the
// database changes (a database's keys are spread over the shards' files; Redis's loader
// takes a SELECTDB of a database it has seen before). Function libraries go first, as
// FUNCTION2 records. Each SELECTDB is followed by RESIZEDB with the database's key count
// across all the files, when the caller gives the counts (db_keys): a loader sizes its
// table once from it, where without it the table grows by splitting as the keys come
// (a strata replica's load of 2M keys took about 3x as long). Next() produces the stream
// a piece at a time, so the caller can send it as it is made and never holds more than a
// piece of it.
//
// A file with spilled values (cold records) is refused: only the server's spill store
// holds them.
//
// Thread-safety: one thread at a time (the master's encoder thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/rdb_writer.h"
#include "storage/shard_snapshot.h"
#include "storage/status.h"

namespace strata {

class SnapshotRdbEncoder {
 public:
  // Takes the open file descriptors (closed by the destructor). db_keys[db]: the keys
  // database db holds over all the files (0 or absent: unknown).
  SnapshotRdbEncoder(std::vector<int> fds, std::vector<std::string> functions,
                     const rdb::RdbWriter::Options& opts, std::string redis_version,
                     std::vector<uint64_t> db_keys = {});
  ~SnapshotRdbEncoder();
  SnapshotRdbEncoder(const SnapshotRdbEncoder&) = delete;
  SnapshotRdbEncoder& operator=(const SnapshotRdbEncoder&) = delete;

  // Appends the next piece of the RDB, about `piece` bytes or more, to *out; sets *done
  // after the last (the EOF opcode and the checksum).
  Status Next(size_t piece, std::string* out, bool* done);
  uint64_t keys() const { return writer_.keys(); }

 private:
  Status OpenFile(size_t i);
  void CloseFile();
  std::vector<int> fds_;
  std::vector<std::string> functions_;
  std::vector<uint64_t> db_keys_;
  std::string redis_version_;
  rdb::RdbWriter writer_;
  bool started_ = false;
  bool finished_ = false;
  size_t file_ = 0;  // the file being read
  bool file_open_ = false;
  const char* map_ = nullptr;
  size_t map_len_ = 0;
  size_t dropped_ = 0;  // pages below this offset were given back
  ShardSnapshotReader reader_;
  int64_t db_ = -1;
};

}  // namespace strata
