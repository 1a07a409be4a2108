#include "tools/strata-dump/strata_snapshot.h"

#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <filesystem>

#include "core/string_util.h"
#include "storage/dump_payload.h"
#include "storage/file_io.h"
#include "storage/manifest.h"
#include "storage/mono_clock.h"
#include "storage/rdb_reader.h"
#include "storage/snapshot_loader.h"

namespace strata::dump {

namespace {

std::string DirOf(const std::string& path) {
  std::filesystem::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : ".";
}

constexpr uint32_t kDatabases = 16;

}  // namespace

bool IsStrataSnapshot(const std::string& path) {
  std::string data;
  if (!ReadWholeFile(path, &data).ok()) return false;
  if (data.rfind("REDIS", 0) == 0 || data.rfind("VALKEY", 0) == 0) return false;
  Manifest m;
  return DecodeManifest(data, path, &m).ok();
}

std::unique_ptr<StrataSnapshotSource> StrataSnapshotSource::Open(const std::string& path,
                                                                 std::string* error) {
  std::string data;
  Status s = ReadWholeFile(path, &data);
  Manifest m;
  if (s.ok()) s = DecodeManifest(data, path, &m);
  if (!s.ok()) {
    *error = s.message();
    return nullptr;
  }
  uint32_t dbs = kDatabases;
  for (const ManifestLink& l : m.chain) {
    for (const ManifestFile& f : l.files) {
      if (!f.cold.empty()) {
        *error = path + " holds spilled values (" + f.cold +
                 "), which only the server that wrote it can read back; load it into a "
                 "server and dump from there";
        return nullptr;
      }
      for (const auto& [db, n] : f.db_records) dbs = std::max(dbs, db + 1);
    }
  }
  auto src = std::unique_ptr<StrataSnapshotSource>(new StrataSnapshotSource());
  src->ks_ = std::make_unique<Keyspace>(dbs);
  // One shard of one: the loader reads every file of the chain and keeps every key.
  ShardLoadJob job(*src->ks_, DirOf(path), m, 0, 1);
  bool done = false;
  int64_t now = UnixMsNow();
  while (!done) {
    s = job.Step(int64_t{1} << 40, now, &done);
    if (!s.ok()) {
      *error = s.message();
      return nullptr;
    }
  }
  for (uint32_t db = 0; db < dbs; db++) {
    src->ks_->table(db).ForEach([&](Entry* e) { src->entries_.push_back({db, e}); });
  }
  return src;
}

bool StrataSnapshotSource::Seek(const std::string& position, std::string* error) {
  uint64_t v = 0;
  if (!ParseUint64(position, &v) || v > entries_.size()) {
    *error = "bad position '" + position + "' for a snapshot";
    return false;
  }
  next_ = static_cast<size_t>(v);
  return true;
}

bool StrataSnapshotSource::Next(Item* item, std::string* error) {
  error->clear();
  if (next_ >= entries_.size()) return false;
  const auto& [db, e] = entries_[next_++];
  std::string payload = rdb::MakeDumpPayload(e->Type(), Keyspace::Serialize(e), {});
  item->db = db;
  item->key.assign(e->Key());
  item->type_id = static_cast<uint8_t>(payload[0]);
  item->value.assign(payload, 1, payload.size() - 11);
  item->expire_ms = e->HasExpire() ? e->ExpireMs() : -1;
  item->idle_s = -1;
  item->freq = -1;
  return true;
}

StrataSnapshotSink::~StrataSnapshotSink() {
  if (f_ != nullptr) {
    std::fclose(f_);
    std::remove(file_path_.c_str());
  }
}

bool StrataSnapshotSink::Open(const std::string& path, std::string* error) {
  path_ = path;
  dir_ = DirOf(path);
  file_name_ = std::filesystem::path(path).filename().string() + "-000001-0.snap";
  file_path_ = JoinPath(dir_, file_name_);
  f_ = std::fopen(file_path_.c_str(), "wb");
  if (f_ == nullptr) {
    *error = file_path_ + ": " + std::strerror(errno);
    return false;
  }
  SnapshotHeader h;
  h.kind = SnapshotKind::kFull;
  h.shard = 0;
  h.shard_count = 1;
  h.seq = 1;
  h.created_ms = UnixMsNow();
  writer_ = std::make_unique<ShardSnapshotWriter>(BlockCodec::kLz4, h);
  return Drain(error);
}

bool StrataSnapshotSink::Drain(std::string* error) {
  std::string* out = writer_->output();
  if (!out->empty() && std::fwrite(out->data(), 1, out->size(), f_) != out->size()) {
    *error = file_path_ + ": write failed: " + std::strerror(errno);
    return false;
  }
  bytes_ += out->size();
  out->clear();
  return true;
}

bool StrataSnapshotSink::Add(const Item& item, std::string* error) {
  rdb::RdbValue v;
  std::string why;
  if (rdb::ParseDumpPayload(item.Payload(), {}, &v, &why) != rdb::PayloadStatus::kOk) {
    *error = "key '" + item.key + "': its value does not decode: " + why;
    return false;
  }
  if (v.kind == rdb::RdbKind::kModule ||
      (!v.field_expire_ms.empty() && rdb::DropExpiredFields(&v, UnixMsNow()) > 0)) {
    *error = "key '" + item.key + "' holds a " + rdb::RdbKindName(v.kind) +
             " value that strata cannot hold yet";
    return false;
  }
  writer_->Add(item.db, v.value_type(), item.key, v.data,
               item.expire_ms >= 0 ? item.expire_ms : Entry::kNoExpire);
  if (item.db >= per_db_.size()) per_db_.resize(item.db + 1);
  per_db_[item.db]++;
  keys_++;
  if (writer_->output()->size() >= (1 << 20)) return Drain(error);
  return true;
}

bool StrataSnapshotSink::Finish(std::string* error) {
  std::string tail = writer_->Finish();
  if (!tail.empty() && std::fwrite(tail.data(), 1, tail.size(), f_) != tail.size()) {
    *error = file_path_ + ": write failed: " + std::strerror(errno);
    return false;
  }
  bytes_ += tail.size();
  if (std::fflush(f_) != 0 || fsync(fileno(f_)) != 0) {
    *error = file_path_ + ": " + std::strerror(errno);
    return false;
  }
  std::fclose(f_);
  f_ = nullptr;
  Manifest m;
  m.seq = 1;
  m.created_ms = UnixMsNow();
  m.shard_count = 1;
  m.range_bits = 22;
  ManifestLink link;
  link.kind = SnapshotKind::kFull;
  link.seq = 1;
  link.created_ms = m.created_ms;
  ManifestFile f;
  f.name = file_name_;
  f.bytes = bytes_;
  f.records = keys_;
  for (uint32_t db = 0; db < per_db_.size(); db++) {
    if (per_db_[db] > 0) f.db_records.push_back({db, per_db_[db]});
  }
  link.files.push_back(f);
  m.chain.push_back(link);
  std::string enc = EncodeManifest(m);
  std::string tmp = path_ + ".tmp-" + std::to_string(getpid());
  FILE* mf = std::fopen(tmp.c_str(), "wb");
  bool ok = mf != nullptr && std::fwrite(enc.data(), 1, enc.size(), mf) == enc.size() &&
            std::fflush(mf) == 0 && fsync(fileno(mf)) == 0;
  if (mf != nullptr) std::fclose(mf);
  if (!ok || std::rename(tmp.c_str(), path_.c_str()) != 0) {
    std::remove(tmp.c_str());
    *error = path_ + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace strata::dump
