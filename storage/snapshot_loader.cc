#include "storage/snapshot_loader.h"

#include <time.h>

#include "core/hash.h"
#include "storage/mono_clock.h"

namespace strata {

ShardLoadJob::ShardLoadJob(Keyspace& ks, std::string dir, const Manifest& m, uint32_t shard,
                           uint32_t shard_count)
    : ks_(ks),
      dir_(std::move(dir)),
      shard_(shard),
      shard_count_(shard_count),
      old_count_(m.shard_count) {
  for (const ManifestLink& l : m.chain) {
    for (uint32_t s = 0; s < l.files.size(); s++) {
      if (old_count_ == shard_count_ && s != shard_) continue;
      items_.push_back({JoinPath(dir_, l.files[s].name), s});
      stats_.bytes_total += l.files[s].bytes;
    }
  }
  // Size the tables for the base's keys first: they arrive sorted by hash.
  if (m.chain.empty()) return;
  std::vector<uint64_t> per_db;
  const ManifestLink& base = m.chain[0];
  for (uint32_t s = 0; s < base.files.size(); s++) {
    if (old_count_ == shard_count_ && s != shard_) continue;
    for (const auto& [db, n] : base.files[s].db_records) {
      if (db >= ks_.db_count()) continue;
      if (db >= per_db.size()) per_db.resize(db + 1);
      per_db[db] += n;
    }
  }
  for (uint32_t db = 0; db < per_db.size(); db++) {
    uint64_t n = old_count_ == shard_count_ ? per_db[db] : per_db[db] / shard_count_;
    ks_.Reserve(db, n);
  }
}

void ShardLoadJob::AllowCold() {
  reader_.set_cold_sink([this](uint32_t db, ValueType type, std::string_view key,
                               const ColdRecord& c, int64_t expire_ms) -> Status {
    if (db >= ks_.db_count()) {
      return Status::InvalidArgument("a key of database " + std::to_string(db) +
                                     " does not fit 'databases' " + std::to_string(ks_.db_count()));
    }
    if (expire_ms != Entry::kNoExpire && expire_ms <= now_ms_) {
      ks_.Delete(db, key);
      ks_.NoteDroppedOnLoad(db, key);
      stats_.keys_expired++;
      return Status::Ok();
    }
    ks_.InsertCold(db, key, type, c.value_len, c.seq, c.disk_len, expire_ms);
    stats_.keys_loaded++;
    return Status::Ok();
  });
}

Status ShardLoadJob::OpenNext() {
  const Item& it = items_[next_];
  Status s = file_.Open(it.path);
  if (!s.ok()) return s;
  s = reader_.Open(file_.data(), it.path);
  if (!s.ok()) return s;
  const SnapshotHeader& h = reader_.header();
  if (h.shard != it.old_shard || h.shard_count != old_count_) {
    return Status::Corruption(it.path + ": header names shard " + std::to_string(h.shard) + " of " +
                              std::to_string(h.shard_count) + ", the manifest shard " +
                              std::to_string(it.old_shard) + " of " + std::to_string(old_count_));
  }
  if (h.kind == SnapshotKind::kDelta) {
    RangeSet ranges;
    std::string error;
    if (!RangeSet::Decode(reader_.ranges(), &ranges, &error))
      return Status::Corruption(it.path + ": " + error);
    // Empty each dirty range of the keys the writing shard owned.
    uint32_t id = 0, from = 0;
    bool same = old_count_ == shard_count_;
    while (ranges.NextAtLeast(from, &id)) {
      uint32_t db = RangeSet::DbOf(id);
      if (db < ks_.db_count()) {
        stats_.keys_deleted += ks_.DeleteHashRange(
            db, RangeSet::FirstHash(id), RangeSet::LastHash(id), [&](const Entry* e) {
              return same || ShardOfKey(e->Key(), old_count_) == it.old_shard;
            });
      }
      if (id == UINT32_MAX) break;
      from = id + 1;
    }
  }
  open_ = true;
  return Status::Ok();
}

Status ShardLoadJob::Step(int64_t budget_ns, int64_t now_ms, bool* done) {
  int64_t deadline = MonoNs() + budget_ns;
  now_ms_ = now_ms;
  *done = false;
  bool filter = old_count_ != shard_count_;
  SnapshotSink sink = [&](uint32_t db, ValueType type, std::string_view key, std::string_view value,
                          int64_t expire_ms) -> Status {
    if (filter && ShardOfKey(key, shard_count_) != shard_) return Status::Ok();
    if (db >= ks_.db_count()) {
      return Status::InvalidArgument("a key of database " + std::to_string(db) +
                                     " does not fit 'databases' " + std::to_string(ks_.db_count()));
    }
    if (expire_ms != Entry::kNoExpire && expire_ms <= now_ms) {
      ks_.Delete(db, key);  // a delta's record may expire a key loaded before
      ks_.NoteDroppedOnLoad(db, key);
      stats_.keys_expired++;
      return Status::Ok();
    }
    if (ks_.SetRaw(db, key, value, type, expire_ms) == nullptr) {
      // Only a stream whose form does not parse is refused (blocks are checksummed, so
      // this is a writer's bug or a format from elsewhere).
      return Status::Corruption("stream '" + std::string(key) + "' does not parse");
    }
    stats_.keys_loaded++;
    return Status::Ok();
  };
  while (next_ < items_.size()) {
    if (!open_) {
      Status s = OpenNext();
      if (!s.ok()) return s;
    }
    bool file_done = false;
    size_t before = reader_.offset();
    // Few records per call: a record may be a big collection, and the time budget is
    // checked between calls.
    Status s = reader_.Next(sink, kRecordsPerCall, &file_done);
    stats_.bytes_read += reader_.offset() - before;
    if (!s.ok()) return s;
    if (file_done) {
      file_.Close();
      open_ = false;
      next_++;
    }
    if (MonoNs() >= deadline) return Status::Ok();
  }
  *done = true;
  return Status::Ok();
}

}  // namespace strata
