#include "storage/cold_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/compaction_filter.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <utility>

#include "storage/seq_set.h"

namespace strata {

namespace {

Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return Status::Ok();
  std::string msg = std::string(context) + ": " + s.ToString();
  if (s.IsNoSpace()) return Status::NoSpace(msg);
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  return Status::IoError(msg);
}

// Bounds of a store's memtable size (RocksDB's write_buffer_size).
constexpr size_t kMinWriteBufferBytes = 256 << 10;
constexpr size_t kMaxWriteBufferBytes = 64 << 20;

uint64_t DecodeKey(const rocksdb::Slice& k) {
  uint64_t seq = 0;
  for (size_t i = 0; i < 8 && i < k.size(); i++) {
    seq = (seq << 8) | static_cast<unsigned char>(k.data()[i]);
  }
  return seq;
}

}  // namespace

// Outside the anonymous namespace: ColdStore::Impl, which has linkage, holds one.
namespace cold_store_internal {

// The records freed by the keyspace that are still in the memtables or the files.
// Erases add to it (the I/O thread); the filter below drops them when a flush or a
// compaction meets them (RocksDB's background threads); reads treat them as absent.
struct DeadSet {
  mutable std::mutex mu;
  SeqSet seqs;                       // under mu
  std::atomic<uint64_t> count{0};    // seqs.size()
  std::atomic<uint64_t> dropped{0};  // records the filter has dropped
  std::atomic<size_t> bytes{0};      // seqs.MemoryBytes(), refreshed by each GC pass

  bool Contains(uint64_t seq) const {
    std::lock_guard<std::mutex> l(mu);
    return seqs.Contains(seq);
  }
};

}  // namespace cold_store_internal

namespace {

using cold_store_internal::DeadSet;

// Drops dead records from what a flush or a compaction writes. Keys arrive in order:
// a dead number between two keys of the input is in none of the files (records are
// written once each, in increasing order, so the files do not overlap), so the filter
// forgets it too, and GC's per-file counts stay exact. Forgetting a number wrongly
// could only leave a dead record on disk, never drop a live one.
class DeadRecordFilter : public rocksdb::CompactionFilter {
 public:
  explicit DeadRecordFilter(std::shared_ptr<DeadSet> dead) : dead_(std::move(dead)) {}
  bool Filter(int /*level*/, const rocksdb::Slice& key, const rocksdb::Slice& /*value*/,
              std::string* /*new_value*/, bool* /*value_changed*/) const override {
    uint64_t seq = DecodeKey(key);
    std::lock_guard<std::mutex> l(dead_->mu);
    if (have_prev_ && seq > prev_ + 1) dead_->seqs.RemoveRange(prev_ + 1, seq - 1);
    have_prev_ = true;
    prev_ = seq;
    bool drop = dead_->seqs.Remove(seq);
    dead_->count.store(dead_->seqs.size(), std::memory_order_relaxed);
    if (drop) dead_->dropped.fetch_add(1, std::memory_order_relaxed);
    return drop;
  }
  const char* Name() const override { return "strata.DeadRecordFilter"; }

 private:
  std::shared_ptr<DeadSet> dead_;
  mutable bool have_prev_ = false;  // one filter per (sub)compaction, used by one thread
  mutable uint64_t prev_ = 0;
};

class DeadRecordFilterFactory : public rocksdb::CompactionFilterFactory {
 public:
  explicit DeadRecordFilterFactory(std::shared_ptr<DeadSet> dead) : dead_(std::move(dead)) {}
  bool ShouldFilterTableFileCreation(rocksdb::TableFileCreationReason reason) const override {
    return reason == rocksdb::TableFileCreationReason::kFlush ||
           reason == rocksdb::TableFileCreationReason::kCompaction;
  }
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& /*context*/) override {
    return std::make_unique<DeadRecordFilter>(dead_);
  }
  const char* Name() const override { return "strata.DeadRecordFilterFactory"; }

 private:
  std::shared_ptr<DeadSet> dead_;
};

// Turns off RocksDB's own recovery from a background error (a full disk). That recovery
// runs on RocksDB's threads, beside the Resume() that Write() calls before the next
// write; in RocksDB 7.8 the two can meet in a write to a file that had already failed,
// which a build with assertions aborts on. Write() alone resumes the store.
class ResumeOnlyOnWrite : public rocksdb::EventListener {
 public:
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason /*reason*/, rocksdb::Status bg_error,
                            bool* auto_recovery) override {
    bg_error.PermitUncheckedError();
    *auto_recovery = false;
  }
  const char* Name() const override { return "strata.ResumeOnlyOnWrite"; }
};

}  // namespace

namespace {
uint64_t SteadyMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}
}  // namespace

std::string ColdKey(uint64_t seq) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; i++) out[i] = static_cast<char>(seq >> (8 * (7 - i)));
  return out;
}

struct ColdCache::Impl {
  size_t capacity;
  std::shared_ptr<rocksdb::Cache> cache;
  std::shared_ptr<rocksdb::WriteBufferManager> wbm;
};

ColdCache::ColdCache(size_t capacity_bytes) : impl_(std::make_unique<Impl>()) {
  impl_->capacity = capacity_bytes;
  impl_->cache = rocksdb::NewLRUCache(capacity_bytes);
  // Memtables reserve their memory in the cache, at most half of it; writers never
  // stall on it (a full budget flushes memtables instead).
  impl_->wbm = std::make_shared<rocksdb::WriteBufferManager>(capacity_bytes / 2, impl_->cache,
                                                             /*allow_stall=*/false);
}

ColdCache::~ColdCache() = default;

size_t ColdCache::capacity_bytes() const { return impl_->capacity; }

size_t ColdCache::UsageBytes() const { return impl_->cache->GetUsage(); }

struct ColdStore::Impl {
  std::shared_ptr<cold_store_internal::DeadSet> dead = std::make_shared<DeadSet>();
  std::shared_ptr<rocksdb::Statistics> stats;
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::WriteOptions write_options;
  // The last write failed, with failure; no resume before resume_after (ms on the
  // steady clock). The I/O thread's: Write is not concurrent.
  bool failed = false;
  Status failure;
  uint64_t resume_after = 0;
  // Write's batch, cleared and reused: its buffer (up to a spill job's bytes,
  // ShardTier::kSpillBatchBytes) stays allocated instead of being grown and freed again
  // for every job.
  rocksdb::WriteBatch write_batch;
  // Free disk space below which nothing more is given to RocksDB (FreeSpaceReserve).
  uint64_t reserve_bytes = 0;
};

ColdStore::ColdStore(std::string dir, std::unique_ptr<Impl> impl)
    : dir_(std::move(dir)), impl_(std::move(impl)) {}

ColdStore::~ColdStore() = default;

Status ColdStore::Open(const ColdStoreOptions& options, ColdCache* cache,
                       std::unique_ptr<ColdStore>* out) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.write_buffer_manager = cache->impl()->wbm;
  // A store's memtables (one active, one being flushed) take at most its share of the
  // half of the cache that memtables may reserve; the stores' budgets sum to that half,
  // so the cache does not grow past its capacity with writes the stores still hold.
  size_t share = cache->capacity_bytes() / 2 / std::max<size_t>(1, options.stores_sharing_cache);
  o.write_buffer_size = std::clamp<size_t>(share / 2, kMinWriteBufferBytes, kMaxWriteBufferBytes);
  o.max_write_buffer_number = 2;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  o.keep_log_file_num = 2;
  o.listeners.push_back(std::make_shared<ResumeOnlyOnWrite>());
  o.max_bgerror_resume_count = 0;  // no retries on RocksDB's threads either
  if (options.compression == "lz4") {
    o.compression = rocksdb::kLZ4Compression;
  } else if (options.compression == "zstd") {
    o.compression = rocksdb::kZSTD;
  } else if (options.compression == "none") {
    o.compression = rocksdb::kNoCompression;
  } else {
    return Status::InvalidArgument("unknown compression '" + options.compression + "'");
  }
  // Every level has the same compression, so the flush compresses once and a file can
  // move down the levels as it is (RocksDB moves a file without rewriting it only into
  // a level of its own compression; uncompressed top levels made every file be
  // rewritten on its way down). Level sizes follow the data.
  o.level_compaction_dynamic_level_bytes = true;
  if (options.level_base_bytes != 0) {
    o.max_bytes_for_level_base = options.level_base_bytes;
    o.target_file_size_base = std::max<uint64_t>(options.level_base_bytes / 4, 64 << 10);
  }
  if (options.blob_min_bytes > 0) {
    o.enable_blob_files = true;
    o.min_blob_size = options.blob_min_bytes;
    o.blob_compression_type = o.compression;
    o.enable_blob_garbage_collection = true;
  }
  auto impl = std::make_unique<Impl>();
  // No point deletes: a freed record is dropped by the filter when its file is next
  // rewritten, and CollectGarbage() asks for that once enough of a file is dead. New
  // records always sort after the old ones, so without tombstones flushed files do not
  // overlap and move down the levels without being rewritten.
  o.compaction_filter_factory = std::make_shared<DeadRecordFilterFactory>(impl->dead);
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache->impl()->cache;
  // Index blocks stay with their table readers, not in the cache: with a small cache
  // and a big store they would otherwise be evicted and read again on every lookup.
  // They cost about 4 bytes per cold value in RAM (an index entry per 4 KB block),
  // counted in used_memory as the table readers' memory. No Bloom filters: every read
  // is for a record that exists, and files do not overlap, so a lookup meets one file
  // whose range holds the key, where a filter could only say yes (it cost 1.25 bytes
  // of RAM per value and a probe per lookup).
  t.cache_index_and_filter_blocks = false;
  t.enable_index_compression = false;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  impl->stats = rocksdb::CreateDBStatistics();
  impl->stats->set_stats_level(rocksdb::StatsLevel::kExceptHistogramOrTimers);
  o.statistics = impl->stats;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, options.dir, &raw);
  if (!s.ok()) return FromRocks(s, "opening the spill store in " + options.dir);
  impl->db.reset(raw);
  impl->write_options.disableWAL = true;
  impl->reserve_bytes = FreeSpaceReserve(o.write_buffer_size);
  out->reset(new ColdStore(options.dir, std::move(impl)));
  return Status::Ok();
}

Status ColdStore::Put(const std::vector<ColdWrite>& batch) {
  rocksdb::WriteBatch wb;
  for (const ColdWrite& w : batch) {
    if (w.erase) return Status::InvalidArgument("ColdStore::Put takes no erases");
    rocksdb::Status s = wb.Put(ColdKey(w.seq), w.value);
    if (!s.ok()) return FromRocks(s, "building a spill batch");
  }
  if (wb.Count() == 0) return Status::Ok();
  return FromRocks(impl_->db->Write(impl_->write_options, &wb),
                   "writing to the spill store in " + dir_);
}

Status ColdStore::Write(const std::vector<ColdWrite>& batch) {
  rocksdb::WriteBatch& wb = impl_->write_batch;
  wb.Clear();
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [first, last] erased
  size_t erases = 0;
  for (const ColdWrite& w : batch) {
    if (w.erase && w.erase_to > w.seq) {
      rocksdb::Status s = wb.DeleteRange(ColdKey(w.seq), ColdKey(w.erase_to));
      if (!s.ok()) return FromRocks(s, "building a spill batch");
      ranges.emplace_back(w.seq, w.erase_to - 1);
    } else if (w.erase) {
      erases++;
    } else {
      rocksdb::Status s = wb.Put(ColdKey(w.seq), w.value);
      if (!s.ok()) return FromRocks(s, "building a spill batch");
    }
  }
  DeadSet& d = *impl_->dead;
  if (erases > 0) {
    // Made dead before the puts are written: an erase is never lost with a failed write.
    std::lock_guard<std::mutex> l(d.mu);
    for (const ColdWrite& w : batch) {
      if (w.erase && w.erase_to <= w.seq) d.seqs.Add(w.seq);
    }
    d.count.store(d.seqs.size(), std::memory_order_relaxed);
  }
  if (impl_->failed) {
    // After an error (a full disk) the store refuses writes until resumed: try again,
    // in case space was freed, but not at every write (a resume writes files too).
    uint64_t now = SteadyMs();
    if (now < impl_->resume_after) return impl_->failure;
    Status r = FromRocks(impl_->db->Resume(), "resuming the spill store in " + dir_);
    if (!r.ok()) {
      impl_->failure = r;
      impl_->resume_after = now + kResumeIntervalMs;
      return r;
    }
    impl_->failed = false;
  }
  if (wb.Count() > 0) {
    if (batch.size() > erases + ranges.size()) {
      // New records: only with room left for the memtables' flushes.
      Status room = CheckFreeSpace("writing to the spill store in " + dir_);
      if (!room.ok()) return room;
    }
    Status st = FromRocks(impl_->db->Write(impl_->write_options, &wb),
                          "writing to the spill store in " + dir_);
    if (!st.ok()) {
      impl_->failed = true;
      impl_->failure = st;
      impl_->resume_after = 0;  // the first resume may follow at once (the error may pass)
      return st;
    }
  }
  if (!ranges.empty()) {
    // A range erase (every record, after FLUSHALL) is a range tombstone: what it covers
    // is no longer counted dead.
    std::lock_guard<std::mutex> l(d.mu);
    for (auto [first, last] : ranges) d.seqs.RemoveRange(first, last);
    d.count.store(d.seqs.size(), std::memory_order_relaxed);
  }
  for (auto [first, last] : ranges) {
    // Whole files under the range go at once, without being read.
    std::string b = ColdKey(first), e = ColdKey(last);
    rocksdb::Slice bs(b), es(e);
    Status st = FromRocks(
        rocksdb::DeleteFilesInRange(impl_->db.get(), impl_->db->DefaultColumnFamily(), &bs, &es),
        "deleting files of the spill store in " + dir_);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

ColdStore::Probe ColdStore::TryGetCached(uint64_t seq, std::string* out) {
  if (impl_->dead->Contains(seq)) return Probe::kAbsent;
  rocksdb::ReadOptions ro;
  ro.read_tier = rocksdb::kBlockCacheTier;
  rocksdb::PinnableSlice v;
  rocksdb::Status s = impl_->db->Get(ro, impl_->db->DefaultColumnFamily(), ColdKey(seq), &v);
  if (s.ok()) {
    out->assign(v.data(), v.size());
    return Probe::kFound;
  }
  if (s.IsNotFound()) return Probe::kAbsent;
  return Probe::kNeedsIo;  // Incomplete: the block is not in the cache
}

Status ColdStore::MultiGet(const std::vector<uint64_t>& seqs,
                           std::vector<std::optional<std::string>>* out, bool fill_cache) {
  size_t n = seqs.size();
  out->assign(n, std::nullopt);
  if (n == 0) return Status::Ok();
  // The call's arrays are kept from one call to the next on each calling thread: a
  // batch of reads allocates only the values it returns. Freed and allocated again per
  // call, they emptied and refilled the allocator's pages at every batch.
  struct Scratch {
    std::string keys;
    std::vector<rocksdb::Slice> slices;
    std::vector<rocksdb::PinnableSlice> values;
    std::vector<rocksdb::Status> statuses;
  };
  thread_local Scratch scratch;
  scratch.keys.resize(n * 8);
  scratch.slices.resize(n);
  for (size_t i = 0; i < n; i++) {
    char* k = scratch.keys.data() + i * 8;
    for (int b = 0; b < 8; b++) k[b] = static_cast<char>(seqs[i] >> (8 * (7 - b)));
    scratch.slices[i] = rocksdb::Slice(k, 8);
  }
  if (scratch.values.size() < n) scratch.values.resize(n);
  scratch.statuses.assign(n, rocksdb::Status());
  rocksdb::ReadOptions ro;
  ro.fill_cache = fill_cache;
  impl_->db->MultiGet(ro, impl_->db->DefaultColumnFamily(), n, scratch.slices.data(),
                      scratch.values.data(), scratch.statuses.data());
  Status result = Status::Ok();
  for (size_t i = 0; i < n; i++) {
    const rocksdb::Status& st = scratch.statuses[i];
    if (result.ok() && !st.IsNotFound()) {
      if (!st.ok()) {
        result = FromRocks(st, "reading from the spill store in " + dir_);
      } else if (!impl_->dead->Contains(seqs[i])) {
        (*out)[i] = std::string(scratch.values[i].data(), scratch.values[i].size());
      }
    }
    scratch.values[i].Reset();  // releases the pinned blocks
  }
  return result;
}

uint64_t ColdStore::MaxSeq() const {
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(rocksdb::ReadOptions()));
  it->SeekToLast();
  return it->Valid() ? DecodeKey(it->key()) : 0;
}

Status ColdStore::Checkpoint(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // an abandoned attempt's
  Status s = CheckFreeSpace("checkpointing " + dir_);
  if (!s.ok()) return s;
  s = FromRocks(impl_->db->Flush(rocksdb::FlushOptions()), "flushing the spill store");
  if (!s.ok()) return s;
  rocksdb::Checkpoint* raw = nullptr;
  s = FromRocks(rocksdb::Checkpoint::Create(impl_->db.get(), &raw), "checkpointing " + dir_);
  if (!s.ok()) return s;
  std::unique_ptr<rocksdb::Checkpoint> cp(raw);
  return FromRocks(cp->CreateCheckpoint(dir), "writing the spill checkpoint " + dir);
}

Status ColdStore::RestoreCheckpoint(const std::string& from, const std::string& live_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(from, ec)) {
    return Status::Corruption("the spill checkpoint " + from + " is missing");
  }
  fs::remove_all(live_dir, ec);
  if (ec) return Status::IoError("removing " + live_dir + ": " + ec.message());
  fs::create_directories(live_dir, ec);
  if (ec) return Status::IoError("creating " + live_dir + ": " + ec.message());
  for (const fs::directory_entry& f : fs::directory_iterator(from, ec)) {
    fs::path to = fs::path(live_dir) / f.path().filename();
    std::string ext = f.path().extension().string();
    std::error_code lec;
    if (ext == ".sst" || ext == ".blob") {
      fs::create_hard_link(f.path(), to, lec);
      if (!lec) continue;  // else (another file system) copied below
    }
    fs::copy_file(f.path(), to, fs::copy_options::overwrite_existing, lec);
    if (lec) return Status::IoError("copying " + f.path().string() + ": " + lec.message());
  }
  if (ec) return Status::IoError("reading " + from + ": " + ec.message());
  return Status::Ok();
}

uint64_t ColdStore::CompactionBytes() const {
  return impl_->stats->getTickerCount(rocksdb::COMPACT_WRITE_BYTES);
}

uint64_t ColdStore::CompactionsRunning() const {
  uint64_t n = 0;
  impl_->db->GetIntProperty(rocksdb::DB::Properties::kNumRunningCompactions, &n);
  return n;
}

uint64_t ColdStore::PendingCompactionBytes() const {
  uint64_t n = 0;
  impl_->db->GetIntProperty(rocksdb::DB::Properties::kEstimatePendingCompactionBytes, &n);
  return n;
}

Status ColdStore::FlushMemtables() {
  Status room = CheckFreeSpace("flushing the spill store in " + dir_);
  if (!room.ok()) return room;
  return FromRocks(impl_->db->Flush(rocksdb::FlushOptions()), "flushing the spill store");
}

uint64_t ColdStore::FreeSpaceReserve(uint64_t write_buffer_bytes) {
  // Both memtables flushed, plus room for the MANIFEST, the info log and a file that a
  // flush or a garbage rewrite is writing.
  return 2 * write_buffer_bytes + kFreeSpaceMarginBytes;
}

uint64_t ColdStore::FreeBytes() const {
  struct statvfs v;
  if (statvfs(dir_.c_str(), &v) != 0) return UINT64_MAX;  // unknown: RocksDB will say
  return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
}

Status ColdStore::CheckFreeSpace(const std::string& what) const {
  uint64_t free_bytes = FreeBytes();
  if (free_bytes >= impl_->reserve_bytes) return Status::Ok();
  return Status::NoSpace(what + ": No space left on device (" + std::to_string(free_bytes) +
                         " bytes free, " + std::to_string(impl_->reserve_bytes) +
                         " kept free for the store's own flushes)");
}

uint64_t ColdStore::MemtableBytes() const {
  uint64_t bytes = 0;
  impl_->db->GetIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &bytes);
  return bytes;
}

Status ColdStore::CompactAll() {
  Status s = CheckFreeSpace("compacting the spill store in " + dir_);
  if (!s.ok()) return s;
  s = FromRocks(impl_->db->Flush(rocksdb::FlushOptions()), "flushing the spill store");
  if (!s.ok()) return s;
  rocksdb::CompactRangeOptions c;
  c.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  return FromRocks(impl_->db->CompactRange(c, nullptr, nullptr), "compacting the spill store");
}

Status ColdStore::CollectGarbage(double min_dead_fraction, size_t* files_rewritten) {
  *files_rewritten = 0;
  std::vector<rocksdb::LiveFileMetaData> files;
  impl_->db->GetLiveFilesMetaData(&files);
  DeadSet& d = *impl_->dead;
  struct Candidate {
    double dead_fraction;
    const rocksdb::LiveFileMetaData* file;
  };
  std::vector<Candidate> rewrite;
  {
    std::lock_guard<std::mutex> l(d.mu);
    d.bytes.store(d.seqs.MemoryBytes(), std::memory_order_relaxed);
    if (d.seqs.empty()) return Status::Ok();
    for (const rocksdb::LiveFileMetaData& f : files) {
      if (f.being_compacted || f.num_entries == 0) continue;
      uint64_t dead = d.seqs.RangeCount(DecodeKey(f.smallestkey), DecodeKey(f.largestkey));
      double fraction = static_cast<double>(dead) / static_cast<double>(f.num_entries);
      if (fraction >= min_dead_fraction) rewrite.push_back({fraction, &f});
    }
  }
  std::sort(rewrite.begin(), rewrite.end(), [](const Candidate& a, const Candidate& b) {
    return a.dead_fraction > b.dead_fraction;
  });
  // A level-0 file goes to the first level below that holds data (RocksDB's base level
  // with dynamic level sizes), as a compaction of level 0 would; files never overlap,
  // so it may. Any other file is rewritten at its level.
  int base_level = impl_->db->NumberLevels() - 1;
  for (const rocksdb::LiveFileMetaData& f : files) {
    if (f.level > 0) base_level = std::min(base_level, f.level);
  }
  rocksdb::CompactionOptions co;
  co.compression = rocksdb::kDisableCompressionOption;  // the level's own
  for (const Candidate& c : rewrite) {
    // The rewrite is written before the old file goes: without room for it beside the
    // reserve, the file waits (a rewrite that ran out of space would stop the store).
    if (FreeBytes() < impl_->reserve_bytes + c.file->size) continue;
    // The filter drops the file's dead records.
    int level = c.file->level == 0 ? base_level : c.file->level;
    rocksdb::Status s = impl_->db->CompactFiles(co, {c.file->name}, level);
    if (s.ok()) {
      (*files_rewritten)++;
    } else if (!s.IsInvalidArgument() && !s.IsAborted() && !s.IsBusy()) {
      // (A file that a background compaction took meanwhile is simply skipped.)
      return FromRocks(s, "rewriting a file of the spill store in " + dir_);
    }
  }
  return Status::Ok();
}

uint64_t ColdStore::DeadRecords() const {
  return impl_->dead->count.load(std::memory_order_relaxed);
}

size_t ColdStore::DeadRecordBytes() const {
  return impl_->dead->bytes.load(std::memory_order_relaxed);
}

uint64_t ColdStore::DroppedRecords() const {
  return impl_->dead->dropped.load(std::memory_order_relaxed);
}

void ColdStore::BeginOrphanSweep(uint64_t max_seq) {
  sweep_ = std::make_unique<SeqSet>();
  if (max_seq > 0) sweep_->AddRange(1, max_seq);
}

void ColdStore::KeepRecord(uint64_t seq) {
  if (sweep_ != nullptr) sweep_->Remove(seq);
}

uint64_t ColdStore::EndOrphanSweep() {
  if (sweep_ == nullptr) return 0;
  uint64_t n = sweep_->size();
  DeadSet& d = *impl_->dead;
  {
    std::lock_guard<std::mutex> l(d.mu);
    d.seqs.AddAll(*sweep_);
    d.count.store(d.seqs.size(), std::memory_order_relaxed);
    d.bytes.store(d.seqs.MemoryBytes(), std::memory_order_relaxed);
  }
  sweep_.reset();
  return n;
}

uint64_t ColdStore::DiskBytes() const {
  uint64_t sst = 0, blob = 0;
  impl_->db->GetIntProperty(rocksdb::DB::Properties::kLiveSstFilesSize, &sst);
  impl_->db->GetIntProperty(rocksdb::DB::Properties::kLiveBlobFileSize, &blob);
  return sst + blob;
}

uint64_t ColdStore::TableReaderBytes() const {
  uint64_t n = 0;
  impl_->db->GetIntProperty(rocksdb::DB::Properties::kEstimateTableReadersMem, &n);
  return n;
}

}  // namespace strata
