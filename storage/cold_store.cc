#include "storage/cold_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>

#include <cstring>
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

std::string EncodeValue(uint64_t seq, std::string_view value) {
  std::string out(8 + value.size(), '\0');
  for (int i = 0; i < 8; i++) out[i] = static_cast<char>(seq >> (8 * i));
  if (!value.empty()) std::memcpy(out.data() + 8, value.data(), value.size());
  return out;
}

bool DecodeValue(const rocksdb::Slice& raw, ColdValue* out) {
  if (raw.size() < 8) return false;
  uint64_t seq = 0;
  for (int i = 0; i < 8; i++) seq |= uint64_t{static_cast<unsigned char>(raw.data()[i])} << (8 * i);
  out->seq = seq;
  out->value.assign(raw.data() + 8, raw.size() - 8);
  return true;
}

}  // namespace

std::string ColdKey(uint32_t db, std::string_view key) {
  std::string out(4 + key.size(), '\0');
  out[0] = static_cast<char>(db >> 24);
  out[1] = static_cast<char>(db >> 16);
  out[2] = static_cast<char>(db >> 8);
  out[3] = static_cast<char>(db);
  if (!key.empty()) std::memcpy(out.data() + 4, key.data(), key.size());
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
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::WriteOptions write_options;
};

ColdStore::ColdStore(std::string dir, std::unique_ptr<Impl> impl)
    : dir_(std::move(dir)), impl_(std::move(impl)) {}

ColdStore::~ColdStore() = default;

Status ColdStore::Open(const ColdStoreOptions& options, ColdCache* cache,
                       std::unique_ptr<ColdStore>* out) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.write_buffer_manager = cache->impl()->wbm;
  o.write_buffer_size = std::max<size_t>(cache->capacity_bytes() / 8, 1 << 20);
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
  if (options.blob_min_bytes > 0) {
    o.enable_blob_files = true;
    o.min_blob_size = options.blob_min_bytes;
    o.blob_compression_type = o.compression;
    o.enable_blob_garbage_collection = true;
  }
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache->impl()->cache;
  t.cache_index_and_filter_blocks = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, options.dir, &raw);
  if (!s.ok()) return FromRocks(s, "opening the spill store in " + options.dir);
  auto impl = std::make_unique<Impl>();
  impl->db.reset(raw);
  impl->write_options.disableWAL = true;
  out->reset(new ColdStore(options.dir, std::move(impl)));
  return Status::Ok();
}

Status ColdStore::Write(const std::vector<ColdWrite>& batch) {
  rocksdb::WriteBatch wb;
  for (const ColdWrite& w : batch) {
    std::string k = ColdKey(w.db, w.key);
    rocksdb::Status s = w.erase ? wb.Delete(k) : wb.Put(k, EncodeValue(w.seq, w.value));
    if (!s.ok()) return FromRocks(s, "building a spill batch");
  }
  return FromRocks(impl_->db->Write(impl_->write_options, &wb),
                   "writing to the spill store in " + dir_);
}

ColdStore::Probe ColdStore::TryGetCached(uint32_t db, std::string_view key, ColdValue* out) {
  rocksdb::ReadOptions ro;
  ro.read_tier = rocksdb::kBlockCacheTier;
  rocksdb::PinnableSlice v;
  rocksdb::Status s = impl_->db->Get(ro, impl_->db->DefaultColumnFamily(), ColdKey(db, key), &v);
  if (s.ok()) return DecodeValue(v, out) ? Probe::kFound : Probe::kNeedsIo;
  if (s.IsNotFound()) return Probe::kAbsent;
  return Probe::kNeedsIo;  // Incomplete: the block is not in the cache
}

Status ColdStore::MultiGet(const std::vector<std::pair<uint32_t, std::string>>& keys,
                           std::vector<std::optional<ColdValue>>* out) {
  size_t n = keys.size();
  out->assign(n, std::nullopt);
  if (n == 0) return Status::Ok();
  std::vector<std::string> encoded;
  encoded.reserve(n);
  for (const auto& [db, key] : keys) encoded.push_back(ColdKey(db, key));
  std::vector<rocksdb::Slice> slices(encoded.begin(), encoded.end());
  std::vector<rocksdb::PinnableSlice> values(n);
  std::vector<rocksdb::Status> statuses(n);
  impl_->db->MultiGet(rocksdb::ReadOptions(), impl_->db->DefaultColumnFamily(), n, slices.data(),
                      values.data(), statuses.data());
  for (size_t i = 0; i < n; i++) {
    if (statuses[i].IsNotFound()) continue;
    if (!statuses[i].ok()) return FromRocks(statuses[i], "reading from the spill store in " + dir_);
    ColdValue v;
    if (!DecodeValue(values[i], &v)) {
      return Status::Corruption("spill store in " + dir_ + ": a record shorter than its header");
    }
    (*out)[i] = std::move(v);
  }
  return Status::Ok();
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
