#include "storage/shard_snapshot.h"

#include <cstring>

namespace strata {

namespace {

constexpr std::string_view kMagic = "STRATA-SNAP";
constexpr uint8_t kRecordEntry = 1;
constexpr uint8_t kFlagExpire = 1;
constexpr uint8_t kTypeMax = static_cast<uint8_t>(ValueType::kHash);

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(std::string_view s, size_t* pos, uint64_t* v) {
  uint64_t r = 0;
  for (int shift = 0; *pos < s.size() && shift < 64; shift += 7) {
    uint8_t b = static_cast<uint8_t>(s[(*pos)++]);
    r |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      *v = r;
      return true;
    }
  }
  return false;
}

void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; i++) out->push_back(static_cast<char>(v >> (8 * i)));
}

bool GetFixed64(std::string_view s, size_t* pos, uint64_t* v) {
  if (s.size() - *pos < 8) return false;
  uint64_t r = 0;
  for (int i = 0; i < 8; i++)
    r |= static_cast<uint64_t>(static_cast<uint8_t>(s[*pos + i])) << (8 * i);
  *pos += 8;
  *v = r;
  return true;
}

bool GetBytes(std::string_view s, size_t* pos, std::string_view* out) {
  uint64_t n = 0;
  if (!GetVarint(s, pos, &n) || n > s.size() - *pos) return false;
  *out = s.substr(*pos, n);
  *pos += n;
  return true;
}

}  // namespace

ShardSnapshotWriter::ShardSnapshotWriter(BlockCodec codec, const SnapshotHeader& header,
                                         size_t block_bytes)
    : codec_(codec), block_bytes_(block_bytes) {
  std::string h(kMagic);
  PutVarint(&h, header.version);
  PutVarint(&h, header.shard);
  PutVarint(&h, header.shard_count);
  PutFixed64(&h, static_cast<uint64_t>(header.created_ms));
  EncodeBlock(BlockCodec::kNone, h, &out_);
}

void ShardSnapshotWriter::Add(uint32_t db, ValueType type, std::string_view key,
                              std::string_view value, int64_t expire_ms) {
  pending_.push_back(static_cast<char>(kRecordEntry));
  PutVarint(&pending_, db);
  pending_.push_back(static_cast<char>(type));
  bool has_expire = expire_ms != Entry::kNoExpire;
  pending_.push_back(static_cast<char>(has_expire ? kFlagExpire : 0));
  if (has_expire) PutFixed64(&pending_, static_cast<uint64_t>(expire_ms));
  PutVarint(&pending_, key.size());
  pending_.append(key);
  PutVarint(&pending_, value.size());
  pending_.append(value);
  records_++;
  if (pending_.size() >= block_bytes_) FlushBlock();
}

void ShardSnapshotWriter::FlushBlock() {
  if (pending_.empty()) return;
  // A record larger than a block gets a block of its own (up to kBlockRawMax; a value is
  // at most proto-max-bulk-len, and bigger collections are split by the caller).
  EncodeBlock(codec_, pending_, &out_);
  pending_.clear();
}

std::string ShardSnapshotWriter::Finish() {
  FlushBlock();
  std::string trailer("END");
  PutVarint(&trailer, records_);
  EncodeBlock(BlockCodec::kNone, trailer, &out_);
  return std::move(out_);
}

Status ReadShardSnapshot(std::string_view file, std::string_view name, SnapshotHeader* header,
                         const SnapshotSink& sink) {
  size_t pos = 0;
  std::string block;
  Status s = DecodeBlock(file, &pos, &block, name);
  if (!s.ok()) return s;
  auto bad = [&](std::string_view why, size_t offset) {
    return Status::Corruption(std::string(name) + ": " + std::string(why) +
                              " in the block at offset " + std::to_string(offset));
  };
  if (block.compare(0, kMagic.size(), kMagic) != 0) return bad("not a strata snapshot", 0);
  size_t p = kMagic.size();
  uint64_t version = 0, shard = 0, count = 0, created = 0;
  if (!GetVarint(block, &p, &version) || !GetVarint(block, &p, &shard) ||
      !GetVarint(block, &p, &count) || !GetFixed64(block, &p, &created)) {
    return bad("malformed header", 0);
  }
  if (version != kSnapshotVersion) {
    return Status::Corruption(std::string(name) + ": format version " + std::to_string(version) +
                              " is not supported (this build reads version " +
                              std::to_string(kSnapshotVersion) + ")");
  }
  header->version = static_cast<uint32_t>(version);
  header->shard = static_cast<uint32_t>(shard);
  header->shard_count = static_cast<uint32_t>(count);
  header->created_ms = static_cast<int64_t>(created);
  uint64_t records = 0;
  while (true) {
    size_t offset = pos;
    if (pos >= file.size()) return bad("missing trailer (file truncated)", offset);
    s = DecodeBlock(file, &pos, &block, name);
    if (!s.ok()) return s;
    if (block.compare(0, 3, "END") == 0 && block.size() > 3) {
      size_t q = 3;
      uint64_t expect = 0;
      if (!GetVarint(block, &q, &expect) || q != block.size())
        return bad("malformed trailer", offset);
      if (expect != records) {
        return bad("trailer counts " + std::to_string(expect) + " records, the file holds " +
                       std::to_string(records),
                   offset);
      }
      if (pos != file.size()) return bad("bytes after the trailer", pos);
      return Status::Ok();
    }
    std::string_view b = block;
    size_t q = 0;
    while (q < b.size()) {
      uint64_t db = 0;
      std::string_view key, value;
      uint64_t expire = 0;
      if (static_cast<uint8_t>(b[q++]) != kRecordEntry || !GetVarint(b, &q, &db) ||
          q + 2 > b.size()) {
        return bad("malformed record", offset);
      }
      uint8_t type = static_cast<uint8_t>(b[q++]);
      uint8_t flags = static_cast<uint8_t>(b[q++]);
      if (type > kTypeMax || (flags & ~kFlagExpire) != 0 ||
          ((flags & kFlagExpire) && !GetFixed64(b, &q, &expire)) || !GetBytes(b, &q, &key) ||
          !GetBytes(b, &q, &value) || db > UINT32_MAX) {
        return bad("malformed record", offset);
      }
      int64_t exp = (flags & kFlagExpire) ? static_cast<int64_t>(expire) : Entry::kNoExpire;
      s = sink(static_cast<uint32_t>(db), static_cast<ValueType>(type), key, value, exp);
      if (!s.ok()) return s;
      records++;
    }
  }
}

}  // namespace strata
