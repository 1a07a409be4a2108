// SnapshotManager, what to load at start-up: the snapshot chain or the RDB file that
// dir and dbfilename name, checked before any worker starts (CheckManifest,
// PrepareLoad), and the spill checkpoints its cold records need. The loading itself is
// the shards' load jobs, stepped in snapshot.cc.
#include <cinttypes>
#include <filesystem>
#include <string>
#include <vector>

#include "server/base/config.h"
#include "server/base/log.h"
#include "server/engine/engine.h"
#include "server/engine/function_store.h"
#include "server/engine/worker.h"
#include "server/persistence/snapshot.h"
#include "server/persistence/tier_service.h"
#include "storage/file_io.h"
#include "storage/mono_clock.h"
#include "storage/rdb_loader.h"

namespace strata {

std::vector<std::string> SnapshotManager::ColdCheckpointsToLoad() const {
  std::vector<std::string> out;
  if (!load_manifest_ || load_manifest_->chain.empty()) return out;
  const ManifestLink& newest = load_manifest_->chain.back();
  bool any = false;
  for (const ManifestFile& f : newest.files) any = any || !f.cold.empty();
  if (!any) return out;
  for (const ManifestFile& f : newest.files) {
    out.push_back(f.cold.empty() ? std::string() : JoinPath(load_dir_, f.cold));
  }
  return out;
}

Status SnapshotManager::CheckManifest(const std::string& dir, const std::string& path,
                                      bool replace_functions, Manifest* out, bool* found) {
  std::string data;
  Status s = ReadWholeFile(path, &data);
  *found = s.code() != Status::Code::kNotFound;
  if (!*found) return Status::Ok();
  Manifest& m = *out;
  if (s.ok()) s = DecodeManifest(data, path, &m);
  if (s.ok()) {
    for (const ManifestLink& l : m.chain) {
      for (const ManifestFile& f : l.files) {
        std::string fp = JoinPath(dir, f.name);
        std::string probe;
        MappedFile mf;
        Status fs = mf.Open(fp);
        if (!fs.ok()) {
          s = Status::Corruption(fp + " (named by " + path + "): " + fs.message());
          break;
        }
        if (mf.data().size() != f.bytes) {
          s = Status::Corruption(fp + ": " + std::to_string(mf.data().size()) +
                                 " bytes, the manifest says " + std::to_string(f.bytes) +
                                 " (truncated at offset " + std::to_string(mf.data().size()) + ")");
          break;
        }
      }
      if (!s.ok()) break;
    }
  }
  if (s.ok() && !m.functions.empty()) {
    // The libraries go in before any key: a library that no longer loads (a damaged
    // manifest would not decode) refuses the snapshot like any damage.
    std::string error;
    if (!FunctionStore::Get().RestoreCodes(m.functions, replace_functions, &error)) {
      s = Status::Corruption(path + ": a function library it holds does not load: " + error);
    }
  }
  if (s.ok() && !m.chain.empty()) {
    // Spilled values live in the newest link's checkpoints of the shards' stores.
    for (const ManifestFile& f : m.chain.back().files) {
      if (f.cold.empty()) continue;
      if (tier_ == nullptr) {
        s = Status::InvalidArgument(path + " holds spilled values (" + f.cold +
                                    "); set spill-dir to load it");
      } else if (!std::filesystem::is_directory(JoinPath(dir, f.cold))) {
        s = Status::Corruption(JoinPath(dir, f.cold) + " (named by " + path + ") is missing");
      }
      if (!s.ok()) break;
    }
  }
  return s;
}

Status SnapshotManager::PrepareLoad() {
  Config& c = engine_->config();
  load_dir_ = c.String("dir");
  std::string name = c.String("dbfilename");
  std::string path = JoinPath(load_dir_, name);
  // A Redis RDB: asked for with import-rdb, or what dbfilename names (a Redis config
  // reused as it is).
  std::string import = c.String("import-rdb");
  if (!import.empty() || RdbShardLoadJob::LooksLikeRdb(path)) {
    std::string rdb_path = import.empty()     ? path
                           : import[0] == '/' ? import
                                              : JoinPath(load_dir_, import);
    std::string err = RdbShardLoadJob::CheckHeader(rdb_path);
    if (!err.empty()) {
      if (c.String("snapshot-on-corrupt") == "start-empty") {
        LogWarning("RDB not loaded, starting empty (snapshot-on-corrupt start-empty): %s",
                   err.c_str());
        return Status::Ok();
      }
      return Status::Corruption("can't load the RDB file: " + err);
    }
    load_rdb_ = rdb_path;
    engine_->HoldLoading(engine_->shard_count());
    loading_shards_.store(engine_->shard_count(), std::memory_order_release);
    load_start_ms_ = WallClockMs();
    LogNotice("Loading RDB %s on %u shards in parallel", rdb_path.c_str(), engine_->shard_count());
    if (rdb_path == path) {
      LogNotice("The next snapshot replaces %s with strata's format (strata-dump writes RDB)",
                path.c_str());
    }
    return Status::Ok();
  }
  Manifest m;
  bool found = false;
  Status s = CheckManifest(load_dir_, path, true, &m, &found);
  if (s.ok() && !found) return Status::Ok();
  if (!s.ok()) {
    if (c.String("snapshot-on-corrupt") == "start-empty") {
      LogWarning("Snapshot not loaded, starting empty (snapshot-on-corrupt start-empty): %s",
                 s.message().c_str());
      return Status::Ok();
    }
    return s;
  }
  next_seq_ = m.seq + 1;
  load_manifest_ = std::move(m);
  engine_->HoldLoading(engine_->shard_count());
  loading_shards_.store(engine_->shard_count(), std::memory_order_release);
  load_start_ms_ = WallClockMs();
  uint64_t files = 0;
  for (const auto& l : load_manifest_->chain) files += l.files.size();
  LogNotice("Loading snapshot %s: %zu link(s), %" PRIu64 " file(s), written by %u shard(s)",
            path.c_str(), load_manifest_->chain.size(), files, load_manifest_->shard_count);
  return Status::Ok();
}

}  // namespace strata
