#include "storage/cold_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/utilities/table_properties_collectors.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

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

}  // namespace

std::string ColdKey(uint64_t seq) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; i++) out[i] = static_cast<char>(seq >> (8 * (7 - i)));
  return out;
}

namespace {

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
  std::shared_ptr<rocksdb::Statistics> stats;
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::WriteOptions write_options;
  bool failed = false;  // the last write failed (the I/O thread's; Write is not concurrent)
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
  if (options.compression == "lz4") {
    o.compression = rocksdb::kLZ4Compression;
  } else if (options.compression == "zstd") {
    o.compression = rocksdb::kZSTD;
  } else if (options.compression == "none") {
    o.compression = rocksdb::kNoCompression;
  } else {
    return Status::InvalidArgument("unknown compression '" + options.compression + "'");
  }
  // Values arrive in key order and mostly stay: the top levels are rewritten soon, so
  // they are not compressed (no CPU spent on data about to move); the bottom ones are.
  // Level sizes follow the data (less rewriting as the store grows).
  // Values arrive in key order and mostly stay: the top levels are rewritten soon, so
  // they are not compressed (no CPU spent on data about to move); the bottom ones are.
  // Level sizes follow the data (less rewriting as the store grows).
  o.compression_per_level.assign(7, o.compression);
  o.compression_per_level[0] = rocksdb::kNoCompression;
  o.compression_per_level[1] = rocksdb::kNoCompression;
  o.level_compaction_dynamic_level_bytes = true;
  if (options.blob_min_bytes > 0) {
    o.enable_blob_files = true;
    o.min_blob_size = options.blob_min_bytes;
    o.blob_compression_type = o.compression;
    o.enable_blob_garbage_collection = true;
  }
  // Files dense with deletes (values deleted, overwritten or read back) are compacted
  // on their own, so disk space follows live data without a full compaction.
  o.table_properties_collector_factories.emplace_back(
      rocksdb::NewCompactOnDeletionCollectorFactory(256, 96, 0.3));
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache->impl()->cache;
  // Index and filter blocks stay with their table readers, not in the cache: with a
  // small cache and a big store they would otherwise be evicted and read again (and
  // decompressed) on every lookup. They cost about 7 bytes per cold value in RAM
  // (an index entry per 4 KB block, a 10-bit Bloom filter per key), counted in
  // used_memory as the table readers' memory.
  t.cache_index_and_filter_blocks = false;
  t.enable_index_compression = false;
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  auto impl = std::make_unique<Impl>();
  impl->stats = rocksdb::CreateDBStatistics();
  impl->stats->set_stats_level(rocksdb::StatsLevel::kExceptTimers);
  o.statistics = impl->stats;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, options.dir, &raw);
  if (!s.ok()) return FromRocks(s, "opening the spill store in " + options.dir);
  impl->db.reset(raw);
  impl->write_options.disableWAL = true;
  out->reset(new ColdStore(options.dir, std::move(impl)));
  return Status::Ok();
}

Status ColdStore::Write(const std::vector<ColdWrite>& batch) {
  if (impl_->failed) {
    // After an error (a full disk) the store refuses writes until resumed: try again,
    // in case space was freed.
    Status r = FromRocks(impl_->db->Resume(), "resuming the spill store in " + dir_);
    if (!r.ok()) return r;
    impl_->failed = false;
  }
  rocksdb::WriteBatch wb;
  for (const ColdWrite& w : batch) {
    std::string k = ColdKey(w.seq);
    rocksdb::Status s = !w.erase             ? wb.Put(k, w.value)
                        : w.erase_to > w.seq ? wb.DeleteRange(k, ColdKey(w.erase_to))
                                             : wb.Delete(k);
    if (!s.ok()) return FromRocks(s, "building a spill batch");
  }
  Status st = FromRocks(impl_->db->Write(impl_->write_options, &wb),
                        "writing to the spill store in " + dir_);
  if (!st.ok()) impl_->failed = true;
  return st;
}

ColdStore::Probe ColdStore::TryGetCached(uint64_t seq, std::string* out) {
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
                           std::vector<std::optional<std::string>>* out) {
  size_t n = seqs.size();
  out->assign(n, std::nullopt);
  if (n == 0) return Status::Ok();
  std::vector<std::string> encoded;
  encoded.reserve(n);
  for (uint64_t seq : seqs) encoded.push_back(ColdKey(seq));
  std::vector<rocksdb::Slice> slices(encoded.begin(), encoded.end());
  std::vector<rocksdb::PinnableSlice> values(n);
  std::vector<rocksdb::Status> statuses(n);
  impl_->db->MultiGet(rocksdb::ReadOptions(), impl_->db->DefaultColumnFamily(), n, slices.data(),
                      values.data(), statuses.data());
  for (size_t i = 0; i < n; i++) {
    if (statuses[i].IsNotFound()) continue;
    if (!statuses[i].ok()) return FromRocks(statuses[i], "reading from the spill store in " + dir_);
    (*out)[i] = std::string(values[i].data(), values[i].size());
  }
  return Status::Ok();
}

uint64_t ColdStore::MaxSeq() const {
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(rocksdb::ReadOptions()));
  it->SeekToLast();
  return it->Valid() ? DecodeKey(it->key()) : 0;
}

Status ColdStore::Checkpoint(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // an abandoned attempt's
  Status s = FromRocks(impl_->db->Flush(rocksdb::FlushOptions()), "flushing the spill store");
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
  return FromRocks(impl_->db->Flush(rocksdb::FlushOptions()), "flushing the spill store");
}

uint64_t ColdStore::MemtableBytes() const {
  uint64_t bytes = 0;
  impl_->db->GetIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &bytes);
  return bytes;
}

Status ColdStore::CompactAll() {
  Status s = FromRocks(impl_->db->Flush(rocksdb::FlushOptions()), "flushing the spill store");
  if (!s.ok()) return s;
  rocksdb::CompactRangeOptions c;
  c.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  return FromRocks(impl_->db->CompactRange(c, nullptr, nullptr), "compacting the spill store");
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
