#include "tools/strata-dump/rdb_sink.h"

#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "storage/dump_payload.h"
#include "storage/rdb_format.h"
#include "tools/strata-dump/filter.h"

namespace strata::dump {

RdbFileSink::~RdbFileSink() {
  if (f_ != nullptr) {
    std::fclose(f_);
    std::remove(tmp_.c_str());
  }
}

bool RdbFileSink::Open(const std::string& path, const Options& opts, std::string* error) {
  opts_ = opts;
  path_ = path;
  tmp_ = path + ".tmp-" + std::to_string(getpid());
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (f_ == nullptr) {
    *error = tmp_ + ": " + std::strerror(errno);
    return false;
  }
  rdb::RdbWriter::Options wo;
  wo.encode.version = opts.version;
  wo.encode.compression = opts.compression;
  wo.checksum = opts.checksum;
  writer_ = std::make_unique<rdb::RdbWriter>(wo);
  writer_->Header("7.0.0", static_cast<int64_t>(time(nullptr)), 0);
  writer_->Aux("strata-dump", "1");
  return Drain(error);
}

bool RdbFileSink::Drain(std::string* error) {
  std::string out = writer_->TakeOutput();
  if (!out.empty() && std::fwrite(out.data(), 1, out.size(), f_) != out.size()) {
    *error = tmp_ + ": write failed: " + std::strerror(errno);
    return false;
  }
  return true;
}

bool RdbFileSink::Add(const Item& item, std::string* error) {
  auto it = opts_.db_map.find(item.db);
  uint32_t db = it == opts_.db_map.end() ? item.db : it->second;
  if (db != db_) {
    writer_->SelectDb(db, 0, 0);
    db_ = db;
  }
  if (rdb::MinVersionForType(item.type_id) <= opts_.version || item.type_id <= rdb::kTypeHash) {
    writer_->RawKey(item.type_id, item.key, item.value, item.expire_ms, item.idle_s, item.freq);
  } else {
    rdb::RdbValue v;
    std::string why;
    if (rdb::ParseDumpPayload(item.Payload(), {}, &v, &why) != rdb::PayloadStatus::kOk) {
      *error = "key '" + item.key + "': its value does not decode: " + why;
      return false;
    }
    // A stream of a newer type (21) is written again as the version's own (19).
    if (v.kind == rdb::RdbKind::kModule || !v.field_expire_ms.empty()) {
      *error = "key '" + item.key + "' holds a " + rdb::TypeIdName(item.type_id) +
               " value, which RDB version " + std::to_string(opts_.version) +
               " cannot hold (use --rdb-version " +
               std::to_string(rdb::MinVersionForType(item.type_id)) + ")";
      return false;
    }
    writer_->Key(v.value_type(), item.key, v.data, item.expire_ms, item.idle_s, item.freq);
  }
  if (writer_->output().size() >= (1 << 20)) return Drain(error);
  return true;
}

bool RdbFileSink::Finish(const std::vector<std::string>& functions, std::string* error) {
  for (const std::string& f : functions) writer_->Function(f);
  writer_->End();
  if (!Drain(error)) return false;
  if (std::fflush(f_) != 0 || fsync(fileno(f_)) != 0) {
    *error = tmp_ + ": " + std::strerror(errno);
    return false;
  }
  std::fclose(f_);
  f_ = nullptr;
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    *error = path_ + ": " + std::strerror(errno);
    std::remove(tmp_.c_str());
    return false;
  }
  return true;
}

}  // namespace strata::dump
