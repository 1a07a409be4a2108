#include "server/persistence/shard_tier.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "server/base/log.h"
#include "server/engine/engine.h"
#include "server/engine/worker.h"

namespace strata {

Status ShardTier::OpenStore(const ColdStoreOptions& options, const std::string& restore_from,
                            ColdCache* cache, std::unique_ptr<ColdStore>* out) {
  namespace fs = std::filesystem;
  const std::string& live_dir = options.dir;
  std::error_code ec;
  if (!restore_from.empty()) {
    Status s = ColdStore::RestoreCheckpoint(restore_from, live_dir);
    if (!s.ok()) return s;
  } else {
    // The store holds values only for keys in RAM: what a previous run left is garbage.
    fs::remove_all(live_dir, ec);
    if (ec)
      return Status::IoError("removing the old spill store " + live_dir + ": " + ec.message());
  }
  return ColdStore::Open(options, cache, out);
}

ShardTier::ShardTier(Worker& w, ColdCache* cache, uint32_t shard_count,
                     std::unique_ptr<ColdStore> store, std::atomic<uint32_t>* can_free_shards)
    : worker_(w),
      ks_(w.keyspace()),
      cache_(cache),
      shard_count_(shard_count),
      store_(std::move(store)),
      picker_(0x9E3779B97F4A7C15ull ^ (uint64_t{w.index()} << 32)),
      can_free_shards_(can_free_shards) {
  next_seq_ = store_->MaxSeq() + 1;
  // Opened stores are empty unless restored from a snapshot's checkpoint.
  orphan_sweep_max_seq_ = next_seq_ - 1;
  io_ =
      std::make_unique<ColdIo>(store_.get(), "strata-spill-" + std::to_string(w.index()),
                               "strata-gc-" + std::to_string(w.index()),
                               [this](std::unique_ptr<ColdJob> job) { Completed(std::move(job)); });
  ks_.set_cold_hook(this);
  worker_.set_cold_gate(this);
}

ShardTier::~ShardTier() {
  if (can_free_) can_free_shards_->fetch_sub(1, std::memory_order_relaxed);
  closing_.store(true, std::memory_order_release);
  io_.reset();  // finishes the queued jobs (their completions are dropped) and joins
  if (worker_.cold_gate() == this) worker_.set_cold_gate(nullptr);
  ks_.set_cold_hook(nullptr);
}

std::string ShardTier::Id(uint32_t db, std::string_view key) {
  std::string id(4 + key.size(), '\0');
  std::memcpy(id.data(), &db, 4);
  if (!key.empty()) std::memcpy(id.data() + 4, key.data(), key.size());
  return id;
}

// ---- cold reads ----

bool ShardTier::MustWait(uint32_t db, const std::vector<std::string_view>& keys, bool need_values) {
  if (held_.empty() && (!need_values || ks_.cold_keys() == 0)) return false;
  bool wait = false;
  for (std::string_view key : keys) {
    if (!held_refs_.empty() && held_refs_.count(Id(db, key)) != 0) {
      wait = true;  // behind an earlier command on this key
      continue;
    }
    if (!need_values) continue;
    Entry* e = ks_.FindMeta(db, key, worker_.now_ms());
    if (e == nullptr || !e->IsCold()) continue;
    uint64_t seq = e->ColdSeq();
    std::string id = Id(db, key);
    if (reading_.count(id) != 0) {
      wait = true;
      continue;
    }
    std::string value;
    if (ShouldProbeCache() && ProbeCache(seq, &value)) {
      // A kept record is not erased when MakeHot frees the cold entry (ColdFreed).
      if (no_room_) kept_records_.insert(seq);
      ks_.MakeHot(db, e, value);
      if (no_room_) {
        // The command gets the value; the turn's end puts it back (ReturnToDisk).
        returning_.push_back(Returning{db, std::string(key), seq, std::move(value)});
        has_work_ = true;
      } else {
        stats_.unspills.fetch_add(1, std::memory_order_relaxed);
      }
      continue;
    }
    reading_.emplace(id, seq);
    reading_ids_.emplace(seq, std::move(id));
    read_batch_.push_back(seq);
    has_work_ = true;
    wait = true;
  }
  return wait;
}

// The probe is a RocksDB lookup (an index search in each level's file) done on the
// worker; when the block is not cached it is wasted, and the read goes to the I/O
// thread anyway (whose MultiGet finds cached blocks too). With a working set much
// larger than the cache nearly every probe misses, so while the recent hit rate is
// under 1/kProbeMinHitRatio only one cold read in kProbeSampleEvery probes: enough to
// notice when the cache starts to pay again.
//
// Filling the cache with the blocks a read brings costs about as much as the read when
// the cache turns over (an allocation, a copy, an LRU insertion and an eviction), so the
// same rule decides: while probes mostly miss, one read batch in kProbeSampleEvery
// fills it, enough for the probes to notice a working set that would fit.
bool ShardTier::CacheIsPaying() const { return probe_hits_ * kProbeMinHitRatio >= probes_; }

bool ShardTier::ShouldProbeCache() {
  if (CacheIsPaying()) return true;
  return ++probes_skipped_ % kProbeSampleEvery == 0;
}

bool ShardTier::ProbeCache(uint64_t seq, std::string* value) {
  bool hit = store_->TryGetCached(seq, value) == ColdStore::Probe::kFound;
  (hit ? stats_.cache_hits : stats_.cache_misses).fetch_add(1, std::memory_order_relaxed);
  probes_++;
  probe_hits_ += hit;
  if (probes_ >= kProbeWindow) {  // the recent past counts most
    probes_ /= 2;
    probe_hits_ /= 2;
  }
  return hit;
}

void ShardTier::Hold(uint32_t db, const std::vector<std::string_view>& keys, HeldCommand cmd) {
  Held h;
  h.cmd = cmd;
  h.ids.reserve(keys.size());
  for (std::string_view key : keys) {
    h.ids.push_back(Id(db, key));
    held_refs_[h.ids.back()]++;
  }
  held_.push_back(std::move(h));
  stats_.held_commands.store(held_.size(), std::memory_order_relaxed);
}

void ShardTier::SubmitReads() {
  if (read_batch_.empty()) return;
  auto job = std::make_unique<ColdJob>();
  job->kind = ColdJob::Kind::kRead;
  job->seqs.swap(read_batch_);
  job->fill_cache = CacheIsPaying() || ++fills_skipped_ % kProbeSampleEvery == 0;
  job->bytes = job->seqs.size() * 64;
  stats_.pending_reads.fetch_add(job->seqs.size(), std::memory_order_relaxed);
  io_->Submit(std::move(job));
}

void ShardTier::OnRead(ColdJob& job) {
  stats_.pending_reads.fetch_sub(job.seqs.size(), std::memory_order_relaxed);
  for (size_t i = 0; i < job.seqs.size(); i++) {
    uint64_t seq = job.seqs[i];
    auto it = reading_ids_.find(seq);
    if (it == reading_ids_.end()) continue;
    std::string id = std::move(it->second);
    reading_ids_.erase(it);
    reading_.erase(id);
    uint32_t db;
    std::memcpy(&db, id.data(), 4);
    std::string_view key(id.data() + 4, id.size() - 4);
    Entry* e = ks_.FindMeta(db, key, worker_.now_ms());
    if (e == nullptr || !e->IsCold() || e->ColdSeq() != seq) continue;  // changed meanwhile
    if (!job.status.ok() || i >= job.values.size() || !job.values[i].has_value()) {
      std::string why =
          job.status.ok() ? "the record is missing from the spill store" : job.status.message();
      stats_.read_errors.fetch_add(1, std::memory_order_relaxed);
      SetError("reading a spilled value: " + why);
      failed_[id] = "ERR reading a spilled value failed: " + why;
      continue;
    }
    stats_.disk_reads.fetch_add(1, std::memory_order_relaxed);
    // A kept record is not erased when MakeHot frees the cold entry (ColdFreed).
    if (no_room_) kept_records_.insert(seq);
    ks_.MakeHot(db, e, *job.values[i]);
    if (no_room_) {
      // No room in RAM: the commands get the value, then it goes back (ReturnToDisk).
      returning_.push_back(Returning{db, std::string(key), seq, std::move(*job.values[i])});
    } else {
      stats_.unspills.fetch_add(1, std::memory_order_relaxed);
    }
  }
  RunReady();
  ReturnToDisk();
}

void ShardTier::ReturnToDisk() {
  for (Returning& r : returning_) {
    kept_records_.erase(r.seq);
    Entry* e = ks_.FindMeta(r.db, r.key, worker_.now_ms());
    bool same = e != nullptr && !e->IsCold() &&
                (held_refs_.empty() || held_refs_.count(Id(r.db, r.key)) == 0) &&
                Keyspace::SerializedView(e, &serial_scratch_) == r.value;
    if (same) {
      ks_.MakeCold(r.db, e, r.seq, static_cast<uint32_t>(r.value.size()));
    } else {
      // Written meanwhile (or gone): the record is garbage now.
      stats_.unspills.fetch_add(1, std::memory_order_relaxed);
      ColdFreed(r.seq);
    }
  }
  returning_.clear();
}

void ShardTier::RunReady() {
  // A held command runs once none of its keys is being read and no earlier held command
  // names one of them: commands on a key run in the order they arrived. The ready ones
  // are taken out first and run after, so running one never disturbs the walk.
  std::unordered_set<std::string> blocked;
  std::vector<std::pair<HeldCommand, std::string>> ready;  // error "" = run
  for (auto it = held_.begin(); it != held_.end();) {
    bool can = true;
    for (const std::string& id : it->ids) {
      if (reading_.count(id) != 0 || blocked.count(id) != 0) {
        can = false;
        break;
      }
    }
    if (!can) {
      for (const std::string& id : it->ids) blocked.insert(id);
      ++it;
      continue;
    }
    std::string error;
    for (const std::string& id : it->ids) {
      auto r = held_refs_.find(id);
      if (r != held_refs_.end() && --r->second == 0) held_refs_.erase(r);
      auto f = failed_.find(id);
      if (f != failed_.end() && error.empty()) error = f->second;
    }
    ready.emplace_back(it->cmd, std::move(error));
    it = held_.erase(it);
  }
  failed_.clear();
  stats_.held_commands.store(held_.size(), std::memory_order_relaxed);
  for (auto& [cmd, error] : ready) {
    if (error.empty()) {
      cmd.run(cmd.arg);
    } else {
      cmd.fail(cmd.arg, error);
    }
  }
}

bool ShardTier::ReadColdNow(uint64_t seq, std::string* out) {
  stats_.sync_reads.fetch_add(1, std::memory_order_relaxed);
  if (store_->TryGetCached(seq, out) == ColdStore::Probe::kFound) return true;
  std::vector<std::optional<std::string>> values;
  Status s = store_->MultiGet({seq}, &values);
  if (s.ok() && !values.empty() && values[0].has_value()) {
    *out = std::move(*values[0]);
    stats_.disk_reads.fetch_add(1, std::memory_order_relaxed);
    stats_.unspills.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  stats_.read_errors.fetch_add(1, std::memory_order_relaxed);
  SetError("reading a spilled value: " +
           (s.ok() ? std::string("the record is missing from the spill store") : s.message()));
  return false;
}

// ---- erases ----

void ShardTier::ColdFreed(uint64_t seq) {
  if (!kept_records_.empty() && kept_records_.count(seq) != 0) return;
  // While a snapshot loads, a delta replaces keys of the base, often with cold records
  // naming the same disk records: nothing is erased until the load is done.
  if (worker_.engine().loading()) [[unlikely]]
    return;
  if (hold_erases_) {
    held_erases_.push_back(seq);
    return;
  }
  ColdWrite w;
  w.seq = seq;
  w.erase = true;
  erases_.push_back(std::move(w));
  has_work_ = true;
}

void ShardTier::EndSnapshot() {
  hold_erases_ = false;
  for (uint64_t seq : held_erases_) ColdFreed(seq);
  held_erases_.clear();
  held_erases_.shrink_to_fit();
}

void ShardTier::FlushErases() {
  if (erases_.empty()) return;
  size_t n = erases_.size();
  if (n > kRangeEraseMin && ks_.cold_keys() == 0 && returning_.empty() && write_jobs_.empty()) {
    // No cold entry is left (FLUSHALL) and no spill write is on its way: one range
    // deletion instead of n.
    stats_.erases.fetch_add(n, std::memory_order_relaxed);
    std::vector<ColdWrite> all(1);
    all[0].seq = 0;
    all[0].erase = true;
    all[0].erase_to = next_seq_;
    std::vector<ColdWrite>().swap(erases_);
    SubmitWrites(std::move(all), {}, 64);
    return;
  }
  stats_.erases.fetch_add(n, std::memory_order_relaxed);
  std::vector<ColdWrite> batch;
  batch.swap(erases_);
  SubmitWrites(std::move(batch), {}, n * 16);
}

// ---- going cold ----

int64_t ShardTier::worker_now_ms() const { return worker_.now_ms(); }

void ShardTier::PublishCanFree() {
  bool can = enabled_ && !nothing_to_spill_ && !disk_full_ && worker_.now_ms() >= paused_until_ms_;
  if (can == can_free_) return;
  can_free_ = can;
  if (can) {
    can_free_shards_->fetch_add(1, std::memory_order_relaxed);
  } else {
    can_free_shards_->fetch_sub(1, std::memory_order_relaxed);
  }
}

size_t ShardTier::MaxInflightBytes(const Settings& s) const {
  size_t share = s.high_bytes / 32 / std::max<uint32_t>(1, shard_count_);
  return std::clamp(share, kMinInflightBytes, kMaxInflightBytesCap);
}

void ShardTier::Spill(const Settings& s, int64_t now_ms) {
  size_t budget = MaxInflightBytes(s);
  if (inflight_write_bytes_ >= budget) return;
  budget = std::min(budget - inflight_write_bytes_, kSpillBatchBytes);
  std::vector<SpillPicker::Pick> picks;
  auto skip = [&](uint32_t db, const Entry* e) {
    if (being_written_.count(e) != 0) return true;
    return !held_refs_.empty() && held_refs_.count(Id(db, e->Key())) != 0;
  };
  std::vector<ColdWrite> writes;
  std::vector<SpillItem> items;
  size_t bytes = 0;
  for (int round = 0; round < kMaxRoundsPerTurn && bytes < budget; round++) {
    picks.clear();
    if (picker_.Round(ks_, s.min_value_bytes, kSamplesPerRound, skip, &picks) == 0) break;
    for (const SpillPicker::Pick& p : picks) {
      if (bytes >= budget) break;
      if (being_written_.count(p.entry) != 0) continue;  // picked twice this turn
      ColdWrite w;
      w.seq = next_seq_++;
      w.value = Keyspace::Serialize(p.entry);
      bytes += w.value.size() + p.entry->KeyLen() + 32;
      being_written_.insert(p.entry);
      items.push_back(SpillItem{p.db, std::string(p.entry->Key()), p.entry});
      writes.push_back(std::move(w));
    }
  }
  (void)now_ms;
  if (writes.empty()) {
    nothing_to_spill_ =
        inflight_write_bytes_ == 0 && picker_.exhausted() && !FlushIfNothingToSpill();
    return;
  }
  nothing_to_spill_ = false;
  SubmitWrites(std::move(writes), std::move(items), bytes);
}

// Every value is on disk, or too small to move, yet memory is still over the watermark:
// the memtables' memory (reserved in the cache, counted in used_memory) is what is left
// to give. Without this, once writes stop nothing would ever flush them. Returns whether
// a flush is running (the shard can still free memory).
bool ShardTier::FlushIfNothingToSpill() {
  if (flush_inflight_) return true;
  if (write_jobs_flushed_ == write_jobs_submitted_) return false;
  auto job = std::make_unique<ColdJob>();
  job->kind = ColdJob::Kind::kFlush;
  job->tag = write_jobs_submitted_;  // the write jobs queued before it
  flush_inflight_ = true;
  io_->Submit(std::move(job));
  return true;
}

void ShardTier::SubmitWrites(std::vector<ColdWrite> writes, std::vector<SpillItem> items,
                             size_t bytes) {
  auto job = std::make_unique<ColdJob>();
  job->kind = ColdJob::Kind::kWrite;
  job->writes = std::move(writes);
  job->bytes = bytes;
  job->tag = next_tag_++;
  inflight_write_bytes_ += bytes;
  write_jobs_submitted_++;
  stats_.pending_write_bytes.store(inflight_write_bytes_, std::memory_order_relaxed);
  if (!items.empty()) write_jobs_.emplace(job->tag, std::move(items));
  io_->Submit(std::move(job));
}

void ShardTier::OnWritten(ColdJob& job) {
  inflight_write_bytes_ -= std::min(inflight_write_bytes_, job.bytes);
  stats_.pending_write_bytes.store(inflight_write_bytes_, std::memory_order_relaxed);
  auto it = write_jobs_.find(job.tag);
  if (it == write_jobs_.end()) {
    // Erases only.
    if (!job.status.ok()) SetError("deleting spilled values: " + job.status.message());
    return;
  }
  std::vector<SpillItem> items = std::move(it->second);
  write_jobs_.erase(it);
  // The job's entries are unmarked first: the pointers are compared, never used.
  for (const SpillItem& item : items) being_written_.erase(item.entry);
  if (!job.status.ok()) {
    stats_.spill_errors.fetch_add(1, std::memory_order_relaxed);
    SetError("spilling values to " + store_->dir() + ": " + job.status.message());
    paused_until_ms_ = worker_.now_ms() + kErrorPauseMs;
    return;  // the values stay in RAM; the records, if any were written, are garbage
  }
  for (size_t i = 0; i < items.size(); i++) {
    ColdWrite& w = job.writes[i];
    stats_.bytes_written.fetch_add(w.value.size(), std::memory_order_relaxed);
    Entry* e = ks_.FindMeta(items[i].db, items[i].key, worker_.now_ms());
    bool same = e != nullptr && !e->IsCold() &&
                (held_refs_.empty() || held_refs_.count(Id(items[i].db, items[i].key)) == 0) &&
                Keyspace::SerializedView(e, &serial_scratch_) == w.value;
    if (!same) {
      // Written, deleted or expired while its value was on the way: it stays as it is.
      stats_.spill_discarded.fetch_add(1, std::memory_order_relaxed);
      ColdFreed(w.seq);
      continue;
    }
    ks_.MakeCold(items[i].db, e, w.seq, static_cast<uint32_t>(w.value.size()));
    stats_.spills.fetch_add(1, std::memory_order_relaxed);
  }
}

// ---- completions ----

void ShardTier::Completed(std::unique_ptr<ColdJob> job) {
  if (closing_.load(std::memory_order_acquire)) return;
  bool post = false;
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    done_.push_back(std::move(job));
    if (!done_posted_) {
      done_posted_ = true;
      post = true;
    }
  }
  if (post) worker_.PostExternal(Task{DrainDone, this});
}

void ShardTier::DrainDone(void* p) {
  auto* self = static_cast<ShardTier*>(p);
  std::vector<std::unique_ptr<ColdJob>> jobs;
  {
    std::lock_guard<std::mutex> lock(self->done_mu_);
    jobs.swap(self->done_);
    self->done_posted_ = false;
  }
  for (auto& job : jobs) {
    switch (job->kind) {
      case ColdJob::Kind::kRead:
        self->OnRead(*job);
        break;
      case ColdJob::Kind::kWrite:
        self->OnWritten(*job);
        break;
      case ColdJob::Kind::kGc:
        self->gc_inflight_ = false;
        self->stats_.gc_files.fetch_add(job->gc_files, std::memory_order_relaxed);
        if (!job->status.ok()) self->SetError(job->status.message());
        break;
      case ColdJob::Kind::kFlush:
        self->flush_inflight_ = false;
        if (job->status.ok()) {
          self->write_jobs_flushed_ = job->tag;
        } else {
          self->stats_.spill_errors.fetch_add(1, std::memory_order_relaxed);
          self->SetError("flushing " + self->store_->dir() + ": " + job->status.message());
          self->paused_until_ms_ = self->worker_.now_ms() + kErrorPauseMs;
        }
        break;
      case ColdJob::Kind::kCheckpoint: {
        auto it = self->checkpoint_jobs_.find(job->tag);
        if (it != self->checkpoint_jobs_.end()) {
          auto done = std::move(it->second);
          self->checkpoint_jobs_.erase(it);
          done(job->status);
        }
        break;
      }
    }
  }
}

void ShardTier::Checkpoint(const std::string& dir, std::function<void(const Status&)> done) {
  FlushErases();
  auto job = std::make_unique<ColdJob>();
  job->kind = ColdJob::Kind::kCheckpoint;
  job->dir = dir;
  job->tag = next_tag_++;
  checkpoint_jobs_.emplace(job->tag, std::move(done));
  io_->Submit(std::move(job));
}

// ---- garbage ----

void ShardTier::MaybeCollectGarbage(const Settings& s, int64_t now_ms) {
  if (gc_inflight_ || now_ms < gc_due_ms_ || store_->DeadRecords() == 0) return;
  gc_due_ms_ = now_ms + kGcIntervalMs;
  auto job = std::make_unique<ColdJob>();
  job->kind = ColdJob::Kind::kGc;
  job->gc_dead_fraction = s.gc_dead_fraction;
  gc_inflight_ = true;
  io_->Submit(std::move(job));
}

// Runs once, on the first turn after the load: a snapshot's checkpoint holds records
// that were dead when it was made (not yet dropped) and records that the load's deltas
// replaced (erases are not made while loading). One pass over the keyspace names the
// live ones; the rest of the restored numbers are dead.
void ShardTier::SweepOrphans() {
  store_->BeginOrphanSweep(orphan_sweep_max_seq_);
  for (uint32_t db = 0; db < ks_.db_count(); db++) {
    ks_.table(db).ForEach([&](const Entry* e) {
      if (e->IsCold()) store_->KeepRecord(e->ColdSeq());
    });
  }
  for (uint64_t seq : kept_records_) store_->KeepRecord(seq);
  for (const Returning& r : returning_) store_->KeepRecord(r.seq);
  uint64_t n = store_->EndOrphanSweep();
  orphan_sweep_max_seq_ = 0;
  stats_.orphans.store(n, std::memory_order_relaxed);
  if (n > 0)
    LogNotice("Spill tier: %" PRIu64 " records in %s are no longer named", n,
              store_->dir().c_str());
}

// ---- the turn ----

void ShardTier::OnTurn(const Settings& s, size_t process_used, int64_t now_ms) {
  if (orphan_sweep_max_seq_ != 0 && !worker_.engine().loading()) [[unlikely]]
    SweepOrphans();
  ReturnToDisk();
  SubmitReads();
  FlushErases();
  has_work_ = false;
  enabled_ = s.high_bytes != 0;
  // Room for values read back: under the low watermark (between the watermarks a value
  // brought back would only push another out, a write for a read).
  no_room_ = enabled_ && process_used > s.low_bytes;
  if (s.high_bytes == 0) {
    spilling_ = false;
  } else if (!spilling_ && process_used > s.high_bytes) {
    spilling_ = true;
  } else if (spilling_ && process_used < s.low_bytes) {
    spilling_ = false;
  }
  // What the last rounds found says nothing once writes go on without spilling.
  if (!spilling_) nothing_to_spill_ = false;
  if (now_ms - rate_ms_ >= 1000) {
    uint64_t reads = stats_.disk_reads.load(std::memory_order_relaxed);
    if (rate_ms_ != 0) {
      stats_.disk_reads_per_sec.store(
          (reads - rate_reads_) * 1000 / static_cast<uint64_t>(now_ms - rate_ms_),
          std::memory_order_relaxed);
    }
    rate_ms_ = now_ms;
    rate_reads_ = reads;
  }
  if (now_ms >= disk_poll_ms_) {
    disk_poll_ms_ = now_ms + kDiskPollMs;
    stats_.disk_bytes.store(store_->DiskBytes(), std::memory_order_relaxed);
    stats_.compaction_bytes.store(store_->CompactionBytes(), std::memory_order_relaxed);
    stats_.compactions_running.store(store_->CompactionsRunning(), std::memory_order_relaxed);
    stats_.compaction_pending_bytes.store(store_->PendingCompactionBytes(),
                                          std::memory_order_relaxed);
    stats_.table_reader_bytes.store(store_->TableReaderBytes(), std::memory_order_relaxed);
    stats_.memtable_bytes.store(store_->MemtableBytes(), std::memory_order_relaxed);
    stats_.dead_records.store(store_->DeadRecords(), std::memory_order_relaxed);
    stats_.dead_record_bytes.store(store_->DeadRecordBytes(), std::memory_order_relaxed);
    stats_.dead_dropped.store(store_->DroppedRecords(), std::memory_order_relaxed);
  }
  MaybeCollectGarbage(s, now_ms);
  // The files lag the memtables: the limit is checked against what was put as well.
  uint64_t on_disk = std::max<uint64_t>(stats_.disk_bytes.load(std::memory_order_relaxed),
                                        ks_.cold_value_bytes() + inflight_write_bytes_);
  bool disk_full = s.max_disk_bytes != 0 && on_disk >= s.max_disk_bytes;
  disk_full_ = disk_full;
  if (disk_full != stats_.disk_limit_reached.load(std::memory_order_relaxed)) {
    stats_.disk_limit_reached.store(disk_full, std::memory_order_relaxed);
    if (disk_full) {
      LogWarning("Spill store %s reached spill-max-disk-size (%llu bytes): spilling stops",
                 store_->dir().c_str(), static_cast<unsigned long long>(s.max_disk_bytes));
    }
  }
  stats_.spilling.store(spilling_, std::memory_order_relaxed);
  if (spilling_ && !disk_full && now_ms >= paused_until_ms_) {
    Spill(s, now_ms);
    // More to do next turn unless the in-flight budget is used up (then the written
    // job's completion wakes the loop).
    has_work_ = inflight_write_bytes_ < MaxInflightBytes(s);
  }
  PublishCanFree();
  RefreshCharges(now_ms);
}

void ShardTier::RefreshCharges(int64_t now_ms) {
  stats_.cold_keys.store(ks_.cold_keys(), std::memory_order_relaxed);
  stats_.cold_value_bytes.store(ks_.cold_value_bytes(), std::memory_order_relaxed);
  stats_.hot_keys.store(ks_.key_count() - ks_.cold_keys(), std::memory_order_relaxed);
  if (now_ms == charges_ms_) return;
  charges_ms_ = now_ms;
  // This shard's share of the process's cache (block cache, index and filter blocks,
  // memtables), its table readers and the bytes it has in flight.
  size_t n = cache_->UsageBytes() / std::max<uint32_t>(1, shard_count_) +
             stats_.table_reader_bytes.load(std::memory_order_relaxed) +
             stats_.dead_record_bytes.load(std::memory_order_relaxed) + inflight_write_bytes_ +
             io_->queued_bytes();
  worker_.set_tier_bytes(n);
}

void ShardTier::SetError(const std::string& what) {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (what != last_error_ || !error_logged_) {
    LogWarning("Spill tier: %s", what.c_str());
    error_logged_ = true;
  }
  last_error_ = what;
}

std::string ShardTier::last_error() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  return last_error_;
}

}  // namespace strata
