#include "storage/rdb_loader.h"

#include <cstdio>

#include "core/access.h"
#include "core/hash.h"
#include "storage/crc64.h"
#include "storage/mono_clock.h"

namespace strata {

RdbShardLoadJob::RdbShardLoadJob(Keyspace& ks, std::string path, uint32_t shard,
                                 uint32_t shard_count, const Options& opts)
    : ks_(ks), path_(std::move(path)), shard_(shard), shard_count_(shard_count), opts_(opts) {}

RdbShardLoadJob::~RdbShardLoadJob() {
  if (crc_thread_.joinable()) crc_thread_.join();
}

bool RdbShardLoadJob::LooksLikeRdb(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char buf[6] = {};
  size_t n = std::fread(buf, 1, sizeof(buf), f);
  std::fclose(f);
  std::string_view s(buf, n);
  return s.substr(0, 5) == "REDIS" || s == "VALKEY";
}

std::string RdbShardLoadJob::CheckHeader(const std::string& path) {
  MappedFile f;
  Status s = f.Open(path);
  if (!s.ok()) return s.message();
  rdb::RdbReader r(f.data(), {});
  if (!r.ReadHeader()) return path + ": " + r.error();
  return "";
}

Status RdbShardLoadJob::Fail(const std::string& what) const {
  return Status::Corruption(path_ + ": " + what);
}

Status RdbShardLoadJob::Open() {
  Status s = file_.Open(path_);
  if (!s.ok()) return s;
  rdb::RdbReader::Options ro;
  ro.skip_modules = opts_.skip_modules;
  ro.verify_checksum = false;  // checked here, on a thread of its own (CheckChecksum)
  check_crc_ = opts_.verify_checksum && shard_ == 0;
  ro.max_string_bytes = opts_.max_string_bytes;
  if (shard_count_ > 1) {
    uint32_t shard = shard_, count = shard_count_;
    ro.keep = [shard, count](uint32_t, std::string_view key) {
      return ShardOfKey(key, count) == shard;
    };
  }
  reader_ = std::make_unique<rdb::RdbReader>(file_.data(), ro);
  stats_.bytes_total = file_.data().size();
  if (!reader_->ReadHeader()) return Fail(reader_->error());
  if (check_crc_ && file_.data().size() >= 8) {
    std::string_view d = file_.data();
    crc_thread_ = std::thread([this, d] { crc_ = crc64::Extend(0, d.data(), d.size() - 8); });
  }
  return Status::Ok();
}

Status RdbShardLoadJob::CheckChecksum() {
  if (crc_thread_.joinable()) crc_thread_.join();
  if (!check_crc_ || reader_->footer() == 0) return Status::Ok();
  std::string_view d = file_.data();
  uint64_t end = reader_->checksum_end();
  // Bytes after the footer (Redis ignores them): the thread's sum is not this one.
  uint64_t crc = end + 8 == d.size() ? crc_ : crc64::Extend(0, d.data(), end);
  if (crc != reader_->footer()) {
    return Fail("at byte " + std::to_string(end) + ": wrong checksum (the file has " +
                std::to_string(reader_->footer()) + ", the data " + std::to_string(crc) + ")");
  }
  verified_ = true;
  return Status::Ok();
}

Status RdbShardLoadJob::Apply(const rdb::RdbRecord& rec, int64_t now_ms) {
  using Kind = rdb::RdbRecord::Kind;
  auto where = [&] {
    return "key '" + rec.name + "' of database " + std::to_string(rec.db) + " at byte " +
           std::to_string(rec.offset);
  };
  switch (rec.kind) {
    case Kind::kSelectDb:
      if (rec.db >= ks_.db_count()) {
        return Fail("the file holds database " + std::to_string(rec.db) + " at byte " +
                    std::to_string(rec.offset) + ", past 'databases' " +
                    std::to_string(ks_.db_count()));
      }
      return Status::Ok();
    case Kind::kResizeDb:
      if (rec.db < ks_.db_count()) ks_.Reserve(rec.db, rec.db_size / shard_count_);
      return Status::Ok();
    case Kind::kFunction:
      if (shard_ == 0) {
        stats_.functions++;
        stats_.function_codes.push_back(rec.text);
      }
      return Status::Ok();
    case Kind::kModuleAux:
      if (shard_ == 0) stats_.keys_skipped++;
      return Status::Ok();
    case Kind::kKey:
      break;
    default:
      return Status::Ok();
  }
  rdb::RdbValue& v = const_cast<rdb::RdbValue&>(rec.value);
  if (rec.empty || v.kind == rdb::RdbKind::kModule) {
    stats_.keys_skipped++;
    return Status::Ok();
  }
  if (rec.expire_ms >= 0 && rec.expire_ms <= now_ms && !opts_.keep_expired_keys) {
    ks_.NoteDroppedOnLoad(rec.db, rec.name);
    stats_.keys_expired++;
    return Status::Ok();
  }
  if (!v.field_expire_ms.empty()) {
    size_t live = rdb::DropExpiredFields(&v, now_ms);
    if (live > 0) {
      return Fail(where() + " has " + std::to_string(live) +
                  " hash fields with their own TTL (HEXPIRE), which strata cannot hold");
    }
    if (v.elements == 0) {
      ks_.NoteDroppedOnLoad(rec.db, rec.name);
      stats_.keys_expired++;
      return Status::Ok();
    }
  }
  Entry* e = ks_.SetRaw(rec.db, rec.name, v.data, v.value_type(),
                        rec.expire_ms >= 0 ? rec.expire_ms : Entry::kNoExpire);
  access::Mode mode = ks_.access_clock().mode;
  if (mode == access::Mode::kLfu && rec.freq >= 0) {
    e->SetAccess(access::LfuState(access::LfuMinutes(now_ms), static_cast<uint8_t>(rec.freq)));
  } else if (mode == access::Mode::kLru && rec.idle_s >= 0) {
    e->SetAccess(access::LruStateIdle(now_ms, rec.idle_s));
  }
  stats_.keys_loaded++;
  return Status::Ok();
}

Status RdbShardLoadJob::Step(int64_t budget_ns, int64_t now_ms, bool* done) {
  *done = false;
  if (reader_ == nullptr) {
    Status s = Open();
    if (!s.ok()) return s;
  }
  int64_t deadline = MonoNs() + budget_ns;
  for (int n = 0;; n++) {
    // Keep kLookahead records decoded ahead, each key's slot prefetched, so that the
    // insert of one overlaps the cache misses of the next ones.
    while (pending_ < kLookahead && !reader_done_) {
      rdb::RdbRecord& r = ring_[(head_ + pending_) % kLookahead];
      if (!reader_->Next(&r)) return Fail(reader_->error());
      pending_++;
      if (r.kind == rdb::RdbRecord::Kind::kEnd) {
        reader_done_ = true;
      } else if (r.kind == rdb::RdbRecord::Kind::kKey && r.db < ks_.db_count()) {
        ks_.Prefetch(r.db, r.name);
      }
    }
    rdb::RdbRecord& rec = ring_[head_];
    head_ = (head_ + 1) % kLookahead;
    pending_--;
    if (rec.kind == rdb::RdbRecord::Kind::kEnd) {
      Status cs = CheckChecksum();
      if (!cs.ok()) return cs;
      stats_.bytes_read = stats_.bytes_total;
      *done = true;
      file_.Close();
      return Status::Ok();
    }
    Status s = Apply(rec, now_ms);
    if (!s.ok()) return s;
    if ((n & 63) == 63) {
      stats_.bytes_read = reader_->offset();
      if (MonoNs() >= deadline) return Status::Ok();
    }
  }
}

}  // namespace strata
