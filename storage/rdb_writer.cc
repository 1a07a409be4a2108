#include "storage/rdb_writer.h"

#include <cstdio>

#include "storage/crc64.h"
#include "storage/rdb_format.h"

namespace strata::rdb {

RdbWriter::RdbWriter(const Options& opts) : opts_(opts) {}

void RdbWriter::Header(std::string_view redis_ver, int64_t ctime_s, uint64_t used_mem) {
  char magic[16];
  std::snprintf(magic, sizeof(magic), "REDIS%04d", opts_.encode.version);
  out_.append(magic, 9);
  Aux("redis-ver", redis_ver);
  Aux("redis-bits", "64");
  Aux("ctime", std::to_string(ctime_s));
  Aux("used-mem", std::to_string(used_mem));
  Aux("aof-base", "0");
}

void RdbWriter::Aux(std::string_view name, std::string_view value) {
  out_.push_back(static_cast<char>(kOpAux));
  AppendString(&out_, name, false);
  AppendString(&out_, value, opts_.encode.compression);
}

void RdbWriter::SelectDb(uint32_t db, uint64_t db_size, uint64_t expires_size) {
  out_.push_back(static_cast<char>(kOpSelectDb));
  AppendLength(&out_, db);
  out_.push_back(static_cast<char>(kOpResizeDb));
  AppendLength(&out_, db_size);
  AppendLength(&out_, expires_size);
}

void RdbWriter::Function(std::string_view code) {
  out_.push_back(static_cast<char>(kOpFunction2));
  AppendString(&out_, code, opts_.encode.compression);
}

void RdbWriter::KeyPrefix(int64_t expire_ms, int64_t idle_s, int freq) {
  if (expire_ms >= 0 && expire_ms != Entry::kNoExpire) {
    out_.push_back(static_cast<char>(kOpExpireTimeMs));
    AppendLE(&out_, static_cast<uint64_t>(expire_ms), 8);
  }
  if (idle_s >= 0) {
    out_.push_back(static_cast<char>(kOpIdle));
    AppendLength(&out_, static_cast<uint64_t>(idle_s));
  } else if (freq >= 0) {
    out_.push_back(static_cast<char>(kOpFreq));
    out_.push_back(static_cast<char>(freq & 0xff));
  }
}

void RdbWriter::RawKey(uint8_t type_id, std::string_view key, std::string_view value,
                       int64_t expire_ms, int64_t idle_s, int freq) {
  KeyPrefix(expire_ms, idle_s, freq);
  out_.push_back(static_cast<char>(type_id));
  AppendString(&out_, key, opts_.encode.compression);
  out_.append(value);
  keys_++;
}

void RdbWriter::Key(ValueType type, std::string_view key, std::string_view data, int64_t expire_ms,
                    int64_t idle_s, int freq) {
  KeyPrefix(expire_ms, idle_s, freq);
  // The type byte comes first, then the key, then the value: encode the value after a
  // placeholder and patch the type in.
  size_t type_pos = out_.size();
  out_.push_back('\0');
  AppendString(&out_, key, opts_.encode.compression);
  std::string value;
  value.reserve(data.size() + 16);
  uint8_t type_id = EncodeValue(type, data, opts_.encode, &value);
  out_[type_pos] = static_cast<char>(type_id);
  out_.append(value, 1, std::string::npos);
  keys_++;
}

void RdbWriter::Checksum() {
  if (opts_.checksum) crc_ = crc64::Extend(crc_, out_.data() + crc_pos_, out_.size() - crc_pos_);
  crc_pos_ = out_.size();
}

std::string RdbWriter::TakeOutput() {
  Checksum();
  taken_ += out_.size();
  std::string s;
  s.swap(out_);
  crc_pos_ = 0;
  return s;
}

void RdbWriter::End() {
  out_.push_back(static_cast<char>(kOpEof));
  Checksum();
  AppendLE(&out_, opts_.checksum ? crc_ : 0, 8);
  crc_pos_ = out_.size();
}

}  // namespace strata::rdb
