// strata's own snapshot format (docs/FORMAT.md: a manifest and its shard files) as a
// strata-dump source and output, beside RDB.
//
//   StrataSnapshotSource  reads a snapshot's chain (base and deltas, any thread count)
//                         into memory with the server's own loader, then gives its keys
//                         as items (values encoded as DUMP payloads). A snapshot whose
//                         values were spilled (cold records) is refused: their bytes are
//                         in the server's spill store, not in the files.
//   StrataSnapshotSink    writes a full one-shard snapshot: the manifest at the given
//                         path and its file beside it (`<path>-000001-0.snap`), which
//                         strata-server loads with any thread count.
// IsStrataSnapshot tells a manifest from an RDB file.
//
// Thread-safety: one thread each.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/keyspace.h"
#include "storage/shard_snapshot.h"
#include "tools/strata-dump/sources.h"

namespace strata::dump {

bool IsStrataSnapshot(const std::string& path);

class StrataSnapshotSource final : public Source {
 public:
  static std::unique_ptr<StrataSnapshotSource> Open(const std::string& path, std::string* error);
  bool Next(Item* item, std::string* error) override;
  uint64_t done() const override { return next_; }
  uint64_t total() const override { return entries_.size(); }
  const char* unit() const override { return "keys"; }
  std::string Position() const override { return std::to_string(next_); }
  bool Seek(const std::string& position, std::string* error) override;

 private:
  std::unique_ptr<Keyspace> ks_;
  std::vector<std::pair<uint32_t, const Entry*>> entries_;
  size_t next_ = 0;
};

class StrataSnapshotSink {
 public:
  ~StrataSnapshotSink();
  bool Open(const std::string& path, std::string* error);
  bool Add(const Item& item, std::string* error);
  bool Finish(std::string* error);
  uint64_t keys() const { return keys_; }
  uint64_t bytes() const { return bytes_; }

 private:
  bool Drain(std::string* error);
  std::string path_, dir_, file_name_, file_path_;
  FILE* f_ = nullptr;
  std::unique_ptr<ShardSnapshotWriter> writer_;
  std::vector<uint64_t> per_db_;
  uint64_t keys_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace strata::dump
