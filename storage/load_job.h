// LoadJob: what a shard's worker steps at startup to load its share of the data - a
// strata snapshot chain (snapshot_loader.h) or a Redis RDB file (rdb_loader.h) - a time
// slice per loop turn, all shards in parallel (server/persistence/snapshot.h).
//
// Thread-safety: a job is owned by its shard's thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/status.h"

namespace strata {

struct LoadStats {
  uint64_t keys_loaded = 0;
  uint64_t keys_expired = 0;
  uint64_t keys_deleted = 0;                // by deltas' ranges
  uint64_t keys_skipped = 0;                // RDB: empty collections and skipped module values
  uint64_t functions = 0;                   // RDB: function libraries seen
  std::vector<std::string> function_codes;  // RDB: their code (shard 0 keeps it)
  uint64_t cold_copied = 0;                 // spilled values copied between stores (resharded)
  uint64_t bytes_read = 0;
  uint64_t bytes_total = 0;
};

class LoadJob {
 public:
  virtual ~LoadJob() = default;
  // Applies records for about budget_ns; *done when everything is loaded. An error
  // names the file and the offset; the caller then drops what was loaded.
  virtual Status Step(int64_t budget_ns, int64_t now_ms, bool* done) = 0;
  virtual const LoadStats& stats() const = 0;
};

}  // namespace strata
