#include "storage/snapshot_loader.h"

#include <time.h>

#include <algorithm>

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

Status ShardLoadJob::InsertCold(uint32_t db, ValueType type, std::string_view key, uint64_t seq,
                                const ColdRecord& c, int64_t expire_ms) {
  if (db >= ks_.db_count()) {
    return Status::InvalidArgument("a key of database " + std::to_string(db) +
                                   " does not fit 'databases' " + std::to_string(ks_.db_count()));
  }
  if (expire_ms != Entry::kNoExpire && expire_ms <= now_ms_) {
    ks_.Delete(db, key);
    NoteDropped(db, key);
    stats_.keys_expired++;
    return Status::Ok();
  }
  ks_.InsertCold(db, key, type, c.value_len, seq, c.disk_len, expire_ms);
  stats_.keys_loaded++;
  return Status::Ok();
}

void ShardLoadJob::AllowCold() {
  reader_.set_cold_sink([this](uint32_t db, ValueType type, std::string_view key,
                               const ColdRecord& c, int64_t expire_ms) -> Status {
    return InsertCold(db, type, key, c.seq, c, expire_ms);
  });
}

void ShardLoadJob::AllowColdResharded(ColdSources* sources, std::function<ColdTarget()> target) {
  sources_ = sources;
  target_fn_ = std::move(target);
  reader_.set_cold_sink([this](uint32_t db, ValueType type, std::string_view key,
                               const ColdRecord& c, int64_t expire_ms) -> Status {
    if (ShardOfKey(key, shard_count_) != shard_) return Status::Ok();
    uint32_t old_shard = items_[next_].old_shard;
    if (ColdSources::IsTagged(c.seq)) {
      return Status::Corruption(items_[next_].path + ": cold record of '" + std::string(key) +
                                "' names record " + std::to_string(c.seq) + ", out of range");
    }
    return InsertCold(db, type, key, ColdSources::TagSeq(old_shard, c.seq), c, expire_ms);
  });
}

Status ShardLoadJob::CopyCold(const std::vector<ToCopy>& batch) {
  if (batch.empty()) return Status::Ok();
  // The entries still to copy, looked up first: one that expired meanwhile (the lookup
  // removes it) gets no record. Nothing else touches the tables until the end of this
  // call, so the entries stay where they are found.
  std::vector<Entry*> entries;
  std::vector<const ToCopy*> items;
  for (const ToCopy& t : batch) {
    Entry* e = ks_.FindMeta(t.db, t.key, now_ms_);
    if (e == nullptr || !e->IsCold() || e->ColdSeq() != t.tagged) continue;
    entries.push_back(e);
    items.push_back(&t);
  }
  if (items.empty()) return Status::Ok();
  std::vector<std::vector<size_t>> by_source(sources_->count());
  for (size_t i = 0; i < items.size(); i++) {
    uint32_t src = ColdSources::TagShard(items[i]->tagged);
    if (src >= by_source.size()) {
      return Status::Corruption("a cold record of '" + items[i]->key + "' names shard " +
                                std::to_string(src) + " of " + std::to_string(sources_->count()));
    }
    by_source[src].push_back(i);
  }
  std::vector<ColdWrite> writes(items.size());
  std::vector<uint64_t> seqs;
  std::vector<std::optional<std::string>> values;
  for (uint32_t src = 0; src < by_source.size(); src++) {
    if (by_source[src].empty()) continue;
    seqs.clear();
    for (size_t i : by_source[src]) seqs.push_back(ColdSources::TagRecord(items[i]->tagged));
    Status s = sources_->Read(src, seqs, &values);
    if (!s.ok()) return s;
    for (size_t j = 0; j < seqs.size(); j++) {
      size_t i = by_source[src][j];
      const std::string& key = items[i]->key;
      if (!values[j].has_value()) {
        return Status::Corruption("the spilled value of '" + key + "' (record " +
                                  std::to_string(seqs[j]) + " of shard " + std::to_string(src) +
                                  ") is missing from the snapshot's spill checkpoint");
      }
      if (values[j]->size() != entries[i]->ColdDiskLen()) {
        return Status::Corruption("the spilled value of '" + key + "' is " +
                                  std::to_string(values[j]->size()) + " bytes, its record says " +
                                  std::to_string(entries[i]->ColdDiskLen()));
      }
      writes[i].value = std::move(*values[j]);
    }
  }
  uint64_t first = target_.take_seqs(writes.size());
  for (size_t i = 0; i < writes.size(); i++) writes[i].seq = first + i;
  Status s = target_.store->Put(writes);
  if (!s.ok()) return s;
  for (size_t i = 0; i < entries.size(); i++) ks_.RelocateCold(entries[i], writes[i].seq);
  stats_.cold_copied += entries.size();
  return Status::Ok();
}

Status ShardLoadJob::CopyColdStep(int64_t deadline_ns, bool* done) {
  *done = false;
  if (!copy_started_) {
    copy_started_ = true;
    target_ = target_fn_();
    if (target_.store == nullptr || !target_.take_seqs) {
      return Status::InvalidArgument("the spill tier of shard " + std::to_string(shard_) +
                                     " is not there to take the snapshot's spilled values");
    }
  }
  std::vector<ToCopy> batch;
  while (copy_db_ < ks_.db_count()) {
    batch.clear();
    while (batch.size() < kCopyBatch && copy_db_ < ks_.db_count()) {
      uint32_t db = copy_db_;
      uint64_t next = ks_.table(db).ScanChunk(copy_cursor_, [&](Entry* e) {
        if (e->IsCold() && ColdSources::IsTagged(e->ColdSeq())) {
          batch.push_back(ToCopy{db, std::string(e->Key()), e->ColdSeq()});
        }
        return false;
      });
      if (next == 0) {
        copy_db_++;
        copy_cursor_ = 0;
      } else {
        copy_cursor_ = next;
      }
    }
    Status s = CopyCold(batch);
    if (!s.ok()) return s;
    if (MonoNs() >= deadline_ns) return Status::Ok();
  }
  *done = true;
  return Status::Ok();
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
      uint32_t db = ranges.DbOf(id);
      uint32_t first = id;
      id = ranges.RunEnd(id);  // a run of dirty ranges (a FLUSHDB's: all) in one pass
      if (db < ks_.db_count()) {
        stats_.keys_deleted += ks_.DeleteHashRange(
            db, ranges.FirstHash(first), ranges.LastHash(id), [&](const Entry* e) {
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

void ShardLoadJob::NoteDropped(uint32_t db, std::string_view key) {
  // Only the last file of the chain can have the last word on a key: an expired record
  // in the base may be followed by the key's live record in a delta. So the keys left
  // out are told (as DEL to a master's replicas) when the chain is loaded, and only
  // those still absent then.
  if (!ks_.has_event_hook()) return;
  dropped_.emplace_back(db, std::string(key));
}

void ShardLoadJob::TellDropped() {
  std::sort(dropped_.begin(), dropped_.end());
  dropped_.erase(std::unique(dropped_.begin(), dropped_.end()), dropped_.end());
  for (const auto& [db, key] : dropped_) {
    if (ks_.FindMeta(db, key, now_ms_) == nullptr) ks_.NoteDroppedOnLoad(db, key);
  }
  dropped_.clear();
  dropped_.shrink_to_fit();
}

Status ShardLoadJob::Step(int64_t budget_ns, int64_t now_ms, bool* done) {
  Status s = StepChain(budget_ns, now_ms, done);
  if (s.ok() && *done) TellDropped();
  return s;
}

Status ShardLoadJob::StepChain(int64_t budget_ns, int64_t now_ms, bool* done) {
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
      NoteDropped(db, key);
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
  if (sources_ != nullptr) return CopyColdStep(deadline, done);
  *done = true;
  return Status::Ok();
}

}  // namespace strata
