#include "server/persistence/tier_service.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "server/base/config.h"
#include "server/base/log.h"
#include "server/engine/worker.h"

namespace strata {

namespace {

void Line(std::string* out, const char* name, const std::string& value) {
  *out += name;
  *out += ':';
  *out += value;
  *out += "\r\n";
}

void Line(std::string* out, const char* name, uint64_t value) {
  Line(out, name, std::to_string(value));
}

double Fraction(const Config& cfg, const char* name) {
  return std::strtod(cfg.String(name).c_str(), nullptr);
}

}  // namespace

TierService::TierService(Engine* engine)
    : engine_(engine),
      dir_(engine->config().String("spill-dir")),
      tiers_(engine->shard_count()),
      per_worker_(engine->shard_count()) {}

TierService::~TierService() {
  Close();
  if (statm_fd_ >= 0) ::close(statm_fd_);
}

void TierService::Close() {
  for (auto& t : tiers_) t.reset();
  stores_.clear();
}

std::string TierService::LiveDir(uint32_t shard) const {
  return (std::filesystem::path(dir_) / ("shard-" + std::to_string(shard))).string();
}

Status TierService::Prepare() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::IoError("creating spill-dir " + dir_ + ": " + ec.message());
  if (::access(dir_.c_str(), W_OK | X_OK) != 0) {
    return Status::IoError("spill-dir " + dir_ + " is not writable");
  }
  const Config& cfg = engine_->config();
  size_t cache = static_cast<size_t>(cfg.Int("spill-cache-size"));
  if (cache == 0) {
    int64_t maxmemory = cfg.maxmemory().load(std::memory_order_relaxed);
    cache = std::max<size_t>(kMinCacheBytes, static_cast<size_t>(maxmemory / 10));
  }
  cache_ = std::make_unique<ColdCache>(cache);
  uint32_t n = engine_->shard_count();
  ColdStoreOptions o;
  o.compression = cfg.String("spill-compression");
  o.blob_min_bytes = static_cast<size_t>(cfg.Int("spill-blob-min-size"));
  o.stores_sharing_cache = n;
  // Another thread count wrote the snapshot: its stores are sources to copy from.
  bool reshard = !restore_.empty() && restore_.size() != n;
  ColdSources::RemoveStale(dir_);
  if (reshard) {
    Status s = ColdSources::Open(restore_, dir_, o, cache_.get(), &sources_);
    if (!s.ok()) return s;
  }
  stores_.resize(n);
  for (uint32_t i = 0; i < n; i++) {
    std::string from = !reshard && i < restore_.size() ? restore_[i] : "";
    o.dir = LiveDir(i);
    Status s = ShardTier::OpenStore(o, from, cache_.get(), &stores_[i]);
    if (!s.ok()) return s;
  }
  LogNotice("Spill tier: %u stores in %s, cache %zu bytes%s", n, dir_.c_str(), cache,
            restore_.empty() ? ""
            : reshard
                ? ", filled from the snapshot's checkpoints of another thread count as it loads"
                : ", restored from the snapshot's checkpoints");
  return Status::Ok();
}

void TierService::OnWorkerStart(Worker& w) {
  uint32_t i = w.index();
  if (i >= stores_.size() || stores_[i] == nullptr) return;
  tiers_[i] = std::make_unique<ShardTier>(w, cache_.get(), engine_->shard_count(),
                                          std::move(stores_[i]), &can_free_shards_);
}

bool TierService::HasWork(const Worker& w) const {
  const ShardTier* t = tiers_[w.index()].get();
  return t != nullptr && t->HasWork();
}

ShardTier::Settings TierService::ReadSettings() const {
  const Config& cfg = engine_->config();
  ShardTier::Settings s;
  int64_t maxmemory = cfg.maxmemory().load(std::memory_order_relaxed);
  if (maxmemory > 0) {
    double high = Fraction(cfg, "spill-high-watermark");
    double low = std::min(high, Fraction(cfg, "spill-low-watermark"));
    s.high_bytes = static_cast<size_t>(static_cast<double>(maxmemory) * high);
    s.low_bytes = static_cast<size_t>(static_cast<double>(maxmemory) * low);
  }
  s.min_value_bytes = static_cast<size_t>(cfg.Int("spill-min-value-size"));
  s.gc_dead_fraction = Fraction(cfg, "spill-gc-dead-fraction");
  s.max_disk_bytes = static_cast<uint64_t>(cfg.Int("spill-max-disk-size"));
  // Each shard's store is measured on its own: the limit is shared evenly.
  if (s.max_disk_bytes != 0)
    s.max_disk_bytes = std::max<uint64_t>(1, s.max_disk_bytes / tiers_.size());
  return s;
}

void TierService::OnWorkerTurn(Worker& w, int64_t turn_ns, bool busy) {
  (void)turn_ns;
  (void)busy;
  ShardTier* t = tiers_[w.index()].get();
  if (t == nullptr) return;
  PerWorker& pw = per_worker_[w.index()];
  uint64_t gen = engine_->config().generation();
  if (gen != pw.generation) {
    pw.generation = gen;
    pw.settings = ReadSettings();
  }
  size_t used = engine_->UsedMemory();
  if (w.index() == 0 && w.now_ms() >= rss_probe_due_ms_) ProbeRss(used, w.now_ms());
  t->OnTurn(pw.settings, used + rss_growth_.load(std::memory_order_relaxed), w.now_ms());
}

void TierService::ProbeRss(size_t used, int64_t now_ms) {
  rss_probe_due_ms_ = now_ms + kRssProbeMs;
  if (statm_fd_ < 0) {
    statm_fd_ = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (statm_fd_ < 0) return;  // no /proc: used_memory alone, as without the probe
  }
  char buf[256];
  ssize_t n = ::pread(statm_fd_, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return;
  buf[n] = '\0';
  unsigned long long size = 0, resident = 0, shared = 0;
  if (std::sscanf(buf, "%llu %llu %llu", &size, &resident, &shared) != 3) return;
  // Resident pages not backed by a file (statm's "shared" is RssFile + RssShmem).
  uint64_t anon =
      (resident > shared ? resident - shared : 0) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t gap = anon > used ? anon - used : 0;
  min_rss_gap_ = std::min<uint64_t>(min_rss_gap_, gap);
  rss_growth_.store(gap - min_rss_gap_, std::memory_order_relaxed);
}

void AppendTierOffInfo(std::string* out) { Line(out, "tiered_enabled", uint64_t{0}); }

void TierService::AppendInfo(std::string* out) const {
  uint64_t spills = 0, unspills = 0, disk_reads = 0, hits = 0, misses = 0, written = 0,
           discarded = 0, spill_errors = 0, read_errors = 0, erases = 0, pending_reads = 0,
           pending_writes = 0, held = 0, disk = 0, compaction = 0, compacting = 0,
           compaction_pending = 0, readers = 0, memtables = 0, dead = 0, dead_bytes = 0,
           dropped = 0, gc_files = 0, orphans = 0, cold = 0, reads_per_sec = 0, cold_bytes = 0,
           hot = 0, sync_reads = 0;
  bool spilling = false, disk_limit = false;
  std::string last_error;
  for (const auto& t : tiers_) {
    if (t == nullptr) continue;
    const TierStats& s = t->stats();
    auto get = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    spills += get(s.spills);
    unspills += get(s.unspills);
    disk_reads += get(s.disk_reads);
    reads_per_sec += get(s.disk_reads_per_sec);
    hits += get(s.cache_hits);
    misses += get(s.cache_misses);
    written += get(s.bytes_written);
    discarded += get(s.spill_discarded);
    spill_errors += get(s.spill_errors);
    read_errors += get(s.read_errors);
    erases += get(s.erases);
    pending_reads += get(s.pending_reads);
    pending_writes += get(s.pending_write_bytes);
    held += get(s.held_commands);
    disk += get(s.disk_bytes);
    compaction += get(s.compaction_bytes);
    compacting += get(s.compactions_running);
    compaction_pending += get(s.compaction_pending_bytes);
    readers += get(s.table_reader_bytes);
    memtables += get(s.memtable_bytes);
    dead += get(s.dead_records);
    dead_bytes += get(s.dead_record_bytes);
    dropped += get(s.dead_dropped);
    gc_files += get(s.gc_files);
    orphans += get(s.orphans);
    cold += get(s.cold_keys);
    cold_bytes += get(s.cold_value_bytes);
    hot += get(s.hot_keys);
    sync_reads += get(s.sync_reads);
    spilling |= s.spilling.load(std::memory_order_relaxed);
    disk_limit |= s.disk_limit_reached.load(std::memory_order_relaxed);
    std::string e = t->last_error();
    if (!e.empty()) last_error = e;
  }
  Line(out, "tiered_enabled", uint64_t{1});
  Line(out, "tiered_dir", dir_);
  Line(out, "tiered_spilling", uint64_t{spilling});
  Line(out, "tiered_hot_keys", hot);
  Line(out, "tiered_cold_keys", cold);
  Line(out, "tiered_cold_value_bytes", cold_bytes);
  Line(out, "tiered_disk_bytes", disk);
  Line(out, "tiered_disk_limit_reached", uint64_t{disk_limit});
  Line(out, "tiered_spills", spills);
  Line(out, "tiered_unspills", unspills);
  Line(out, "tiered_spill_discarded", discarded);
  Line(out, "tiered_disk_reads", disk_reads);
  Line(out, "tiered_disk_reads_per_sec", reads_per_sec);
  Line(out, "tiered_sync_reads", sync_reads);
  Line(out, "tiered_pending_reads", pending_reads);
  Line(out, "tiered_pending_writes", pending_writes);
  Line(out, "tiered_held_commands", held);
  Line(out, "tiered_bytes_written", written);
  Line(out, "tiered_compaction_bytes", compaction);
  Line(out, "tiered_compactions_running", compacting);
  Line(out, "tiered_compaction_pending_bytes", compaction_pending);
  Line(out, "tiered_erases", erases);
  Line(out, "tiered_cache_hits", hits);
  Line(out, "tiered_cache_misses", misses);
  char rate[32];
  std::snprintf(rate, sizeof(rate), "%.4f",
                hits + misses == 0 ? 0.0 : static_cast<double>(hits) / (hits + misses));
  Line(out, "tiered_cache_hit_rate", rate);
  Line(out, "tiered_cache_bytes", static_cast<uint64_t>(CacheBytes()));
  Line(out, "tiered_cache_capacity", static_cast<uint64_t>(CacheCapacity()));
  Line(out, "tiered_rss_outside_used", rss_growth());
  Line(out, "tiered_table_reader_bytes", readers);
  Line(out, "tiered_memtable_bytes", memtables);
  Line(out, "tiered_dead_records", dead);
  Line(out, "tiered_dead_record_bytes", dead_bytes);
  Line(out, "tiered_dead_records_dropped", dropped);
  Line(out, "tiered_gc_file_rewrites", gc_files);
  Line(out, "tiered_orphans_found", orphans);
  Line(out, "tiered_spill_errors", spill_errors);
  Line(out, "tiered_read_errors", read_errors);
  Line(out, "tiered_last_error", last_error.empty() ? std::string("none") : last_error);
}

}  // namespace strata
