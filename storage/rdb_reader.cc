#include "storage/rdb_reader.h"

#include <cstring>

#include "storage/rdb_format.h"

namespace strata::rdb {

RdbReader::RdbReader(std::string_view data, const Options& opts)
    : data_(data), opts_(opts), in_(data) {
  in_.set_max_string_bytes(opts.max_string_bytes);
  decode_.skip_modules = opts.skip_modules;
}

bool RdbReader::ReadHeader() {
  auto digits = [&](size_t from, size_t n, int* v) {
    if (data_.size() < from + n) return false;
    int x = 0;
    for (size_t i = from; i < from + n; i++) {
      char c = data_[i];
      if (c < '0' || c > '9') return false;
      x = x * 10 + (c - '0');
    }
    *v = x;
    return true;
  };
  std::string_view magic;
  if (data_.size() >= 9 && data_.substr(0, 5) == "REDIS" && digits(5, 4, &version_)) {
    if (!in_.ReadBytes(9, &magic, "the header")) return false;
    if (version_ < kMinVersion || version_ > kMaxRedisVersion) {
      return in_.Fail(5, "RDB version " + std::to_string(version_) +
                             " is not one this reader knows (1 to " +
                             std::to_string(kMaxRedisVersion) + ")");
    }
    return true;
  }
  if (data_.size() >= 9 && data_.substr(0, 6) == "VALKEY" && digits(6, 3, &version_)) {
    if (!in_.ReadBytes(9, &magic, "the header")) return false;
    valkey_ = true;
    if (version_ < kValkeyMinVersion || version_ > kValkeyMaxVersion) {
      return in_.Fail(6, "Valkey RDB version " + std::to_string(version_) +
                             " is not one this reader knows (" + std::to_string(kValkeyMinVersion) +
                             ")");
    }
    return true;
  }
  return in_.Fail(0, "not an RDB file (no REDIS or VALKEY header)");
}

void RdbReader::TakeCrc() {
  if (!opts_.verify_checksum) return;
  size_t pos = static_cast<size_t>(in_.offset());
  if (pos > crc_pos_) {
    crc_ = crc64::Extend(crc_, data_.data() + crc_pos_, pos - crc_pos_);
    crc_pos_ = pos;
  }
}

bool RdbReader::ReadKey(uint8_t type, uint64_t start, RdbRecord* rec) {
  rec->kind = RdbRecord::Kind::kKey;
  rec->offset = start;
  rec->db = db_;
  rec->name.clear();
  if (!in_.ReadString(&rec->name, "a key")) return false;
  if (valkey_ && type > kTypeStreamListpacks3) {
    return in_.Fail(start,
                    "Valkey type id " + std::to_string(type) + " is not one this reader knows");
  }
  rec->type_id = type;
  const size_t value_at = static_cast<size_t>(in_.offset());
  auto take_raw = [&] {
    rec->raw = data_.substr(value_at, static_cast<size_t>(in_.offset()) - value_at);
    return true;
  };
  if (opts_.keep && !opts_.keep(db_, rec->name)) {
    rec->kind = RdbRecord::Kind::kSkipped;
    return SkipValue(type, &in_) && take_raw();
  }
  if (!opts_.decode && type != kTypeModulePreGa && type != kTypeModule2) {
    return SkipValue(type, &in_) && take_raw();
  }
  DecodeResult r = DecodeValue(type, &in_, decode_, &rec->value);
  if (r == DecodeResult::kError) return false;
  rec->empty = r == DecodeResult::kEmpty;
  return take_raw();
}

bool RdbReader::Next(RdbRecord* rec) {
  if (in_.failed()) return false;
  if (ended_) return in_.Fail(in_.offset(), "read past the end record");
  rec->expire_ms = -1;
  rec->idle_s = -1;
  rec->freq = -1;
  rec->empty = false;
  while (true) {
    TakeCrc();
    const uint64_t start = in_.offset();
    uint8_t op;
    if (!in_.ReadByte(&op, "an opcode or value type (the file is truncated)")) return false;
    switch (op) {
      case kOpExpireTime: {
        uint32_t s;
        if (!in_.ReadU32LE(&s, "an expiry time")) return false;
        rec->expire_ms = static_cast<int64_t>(s) * 1000;
        continue;
      }
      case kOpExpireTimeMs: {
        uint64_t ms;
        if (!in_.ReadU64LE(&ms, "an expiry time")) return false;
        rec->expire_ms = static_cast<int64_t>(ms);
        continue;
      }
      case kOpIdle: {
        uint64_t idle;
        if (!in_.ReadLength(&idle, "an idle time")) return false;
        rec->idle_s = static_cast<int64_t>(idle);
        continue;
      }
      case kOpFreq: {
        uint8_t f;
        if (!in_.ReadByte(&f, "an LFU frequency")) return false;
        rec->freq = f;
        continue;
      }
      case kOpSelectDb: {
        uint64_t db;
        if (!in_.ReadLength(&db, "a database number")) return false;
        if (db > 0xffffffffULL) return in_.Fail(start, "database number out of range");
        db_ = static_cast<uint32_t>(db);
        rec->kind = RdbRecord::Kind::kSelectDb;
        rec->offset = start;
        rec->db = db_;
        return true;
      }
      case kOpResizeDb:
        rec->kind = RdbRecord::Kind::kResizeDb;
        rec->offset = start;
        rec->db = db_;
        return in_.ReadLength(&rec->db_size, "a database size") &&
               in_.ReadLength(&rec->expires_size, "an expires size");
      case kOpAux:
        rec->kind = RdbRecord::Kind::kAux;
        rec->offset = start;
        rec->name.clear();
        rec->text.clear();
        return in_.ReadString(&rec->name, "an aux field's name") &&
               in_.ReadString(&rec->text, "an aux field's value");
      case kOpFunction2:
        rec->kind = RdbRecord::Kind::kFunction;
        rec->offset = start;
        rec->text.clear();
        return in_.ReadString(&rec->text, "a function library");
      case kOpFunctionPreGa:
        return in_.Fail(start,
                        "a function in the pre-release format (Redis 7.0 release "
                        "candidates), which cannot be read");
      case kOpModuleAux: {
        uint64_t id, when_op, when;
        if (!in_.ReadLength(&id, "a module aux's module id") ||
            !in_.ReadLength(&when_op, "a module aux's when opcode") ||
            !in_.ReadLength(&when, "a module aux's when")) {
          return false;
        }
        std::string name = ModuleTypeName(id);
        if (when_op != kModuleOpUint) {
          return in_.Fail(start, "module aux data of '" + name + "' is malformed");
        }
        if (!opts_.skip_modules) {
          return in_.Fail(start, "aux data of module '" + name +
                                     "', which strata cannot load (skip module values to go on)");
        }
        if (!SkipModulePayload(&in_)) return false;
        rec->kind = RdbRecord::Kind::kModuleAux;
        rec->offset = start;
        rec->module = std::move(name);
        return true;
      }
      case kOpSlotInfo:
        rec->kind = RdbRecord::Kind::kSlotInfo;
        rec->offset = start;
        return in_.ReadLength(&rec->slot, "a slot number") &&
               in_.ReadLength(&rec->db_size, "a slot's size") &&
               in_.ReadLength(&rec->expires_size, "a slot's expires size");
      case kOpEof: {
        TakeCrc();
        rec->kind = RdbRecord::Kind::kEnd;
        rec->offset = start;
        ended_ = true;
        crc_end_ = in_.offset();
        if (version_ < 5 && !valkey_) return true;
        uint64_t footer;
        if (!in_.ReadU64LE(&footer, "the checksum footer")) return false;
        footer_ = footer;
        if (footer != 0 && opts_.verify_checksum) {
          if (footer != crc_) {
            return in_.Fail(in_.offset() - 8, "wrong checksum (the file has " +
                                                  std::to_string(footer) + ", the data " +
                                                  std::to_string(crc_) + ")");
          }
          checksum_verified_ = true;
        }
        return true;
      }
      default:
        if (!IsValueType(op)) {
          return in_.Fail(start, "unknown opcode or value type " + std::to_string(op));
        }
        return ReadKey(op, start, rec);
    }
  }
}

std::string RdbReader::Verify(std::string_view data, const Options& opts) {
  RdbReader r(data, opts);
  if (!r.ReadHeader()) return r.error();
  RdbRecord rec;
  while (r.Next(&rec)) {
    if (rec.kind == RdbRecord::Kind::kEnd) return "";
  }
  return r.error();
}

}  // namespace strata::rdb
