// Manifest: the commit point of a snapshot (docs/FORMAT.md "Manifest").
//
// The manifest names the chain to load: a full snapshot (the base) and the deltas
// written after it, in order, each with one file per shard of the thread count that
// wrote it. It is written last, under a temporary name, fsynced and renamed over the
// previous one, so at any moment the manifest on disk names a complete snapshot whose
// files are all fsynced; files it does not name are leftovers and may be removed.
// It is one checksummed block (block.h), so a damaged manifest is refused.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/shard_snapshot.h"
#include "storage/status.h"

namespace strata {

// Version 2 adds each shard file's spill checkpoint; version 3 the function libraries.
// A manifest is written with the lowest version that holds what it has (1 without
// checkpoints or libraries), so older builds read what they can.
constexpr uint32_t kManifestVersion = 3;
// Identifies how keys map to shards (core/hash.h ShardOf over ShardHash), so that a
// future change of that function is detected instead of misplacing keys.
constexpr uint32_t kShardHashId = 1;

struct ManifestFile {
  std::string name;  // in the snapshot directory
  uint64_t bytes = 0;
  uint64_t records = 0;
  // Records per database (db, count), so a loader can size its tables first.
  std::vector<std::pair<uint32_t, uint64_t>> db_records;
  // The shard's spill store at the cut (a RocksDB checkpoint directory in the snapshot
  // directory), holding every value its cold records name; "" when none.
  std::string cold;
};

struct ManifestLink {
  SnapshotKind kind = SnapshotKind::kFull;
  uint64_t seq = 0;
  int64_t created_ms = 0;
  std::vector<ManifestFile> files;  // one per shard, in shard order
};

struct Manifest {
  uint64_t seq = 0;  // of the newest link
  int64_t created_ms = 0;
  uint32_t shard_count = 0;
  uint32_t shard_hash = kShardHashId;
  uint32_t range_bits = 0;
  std::vector<ManifestLink> chain;  // chain[0] is the base
  // The function libraries' code at the newest link's cut (FUNCTION LOAD), as of
  // version 3.
  std::vector<std::string> functions;
};

std::string EncodeManifest(const Manifest& m);
Status DecodeManifest(std::string_view data, std::string_view name, Manifest* out);

}  // namespace strata
