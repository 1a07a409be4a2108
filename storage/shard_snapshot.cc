#include "storage/shard_snapshot.h"

#include <cstring>

namespace strata {

namespace {

constexpr std::string_view kMagic = "STRATA-SNAP";
constexpr std::string_view kRangesMagic = "RANGES";
constexpr uint8_t kRecordEntry = 1;
constexpr uint8_t kFlagExpire = 1;
constexpr uint8_t kFlagCold = 2;
constexpr uint8_t kTypeMax = static_cast<uint8_t>(ValueType::kStream);

}  // namespace

ShardSnapshotWriter::ShardSnapshotWriter(BlockCodec codec, const SnapshotHeader& header,
                                         size_t block_bytes, std::string_view ranges)
    : codec_(codec), block_bytes_(block_bytes) {
  std::string h(kMagic);
  PutVarint(&h, header.version);
  PutVarint(&h, static_cast<uint8_t>(header.kind));
  PutVarint(&h, header.shard);
  PutVarint(&h, header.shard_count);
  PutVarint(&h, header.seq);
  PutFixed64(&h, static_cast<uint64_t>(header.created_ms));
  EncodeBlock(BlockCodec::kNone, h, &out_);
  if (header.kind == SnapshotKind::kDelta) {
    std::string r(kRangesMagic);
    r.append(ranges);
    EncodeBlock(codec_, r, &out_);
  }
}

void ShardSnapshotWriter::Add(uint32_t db, ValueType type, std::string_view key,
                              std::string_view value, int64_t expire_ms) {
  size_t before = pending_.size();
  pending_.push_back(static_cast<char>(kRecordEntry));
  PutVarint(&pending_, db);
  pending_.push_back(static_cast<char>(type));
  bool has_expire = expire_ms != Entry::kNoExpire;
  pending_.push_back(static_cast<char>(has_expire ? kFlagExpire : 0));
  if (has_expire) PutFixed64(&pending_, static_cast<uint64_t>(expire_ms));
  PutBytes(&pending_, key);
  PutBytes(&pending_, value);
  raw_bytes_ += pending_.size() - before;
  records_++;
  if (pending_.size() >= block_bytes_) FlushBlock();
}

void ShardSnapshotWriter::AddCold(uint32_t db, ValueType type, std::string_view key,
                                  const ColdRecord& cold, int64_t expire_ms) {
  size_t before = pending_.size();
  pending_.push_back(static_cast<char>(kRecordEntry));
  PutVarint(&pending_, db);
  pending_.push_back(static_cast<char>(type));
  bool has_expire = expire_ms != Entry::kNoExpire;
  pending_.push_back(static_cast<char>((has_expire ? kFlagExpire : 0) | kFlagCold));
  if (has_expire) PutFixed64(&pending_, static_cast<uint64_t>(expire_ms));
  PutBytes(&pending_, key);
  PutVarint(&pending_, cold.value_len);
  PutFixed64(&pending_, cold.seq);
  PutVarint(&pending_, cold.disk_len);
  raw_bytes_ += pending_.size() - before;
  records_++;
  if (pending_.size() >= block_bytes_) FlushBlock();
}

void ShardSnapshotWriter::FlushBlock() {
  if (pending_.empty()) return;
  // A record larger than a block gets a block of its own (up to kBlockRawMax; the
  // snapshot job refuses a bigger value before it gets here).
  // Incompressible data (random values) is detected and not compressed for a while:
  // after kMissesToSkip blocks in a row that did not compress, the next kSkipBlocks are
  // stored plain, then compression is tried again.
  BlockCodec c = codec_;
  if (skip_ > 0) {
    skip_--;
    c = BlockCodec::kNone;
  }
  BlockCodec used = EncodeBlock(c, pending_, &out_);
  if (c != BlockCodec::kNone) {
    if (used != BlockCodec::kNone) {
      misses_ = 0;
    } else if (++misses_ >= kMissesToSkip) {
      misses_ = 0;
      skip_ = kSkipBlocks;
    }
  }
  pending_.clear();
}

std::string ShardSnapshotWriter::Finish() {
  FlushBlock();
  std::string trailer("END");
  PutVarint(&trailer, records_);
  EncodeBlock(BlockCodec::kNone, trailer, &out_);
  return std::move(out_);
}

Status ShardSnapshotReader::Bad(std::string_view why, size_t offset) const {
  return Status::Corruption(name_ + ": " + std::string(why) + " in the block at offset " +
                            std::to_string(offset));
}

Status ShardSnapshotReader::Open(std::string_view file, std::string_view name) {
  file_ = file;
  name_ = std::string(name);
  pos_ = 0;
  Status s = DecodeBlock(file_, &pos_, &block_, name_);
  if (!s.ok()) return s;
  if (block_.compare(0, kMagic.size(), kMagic) != 0) return Bad("not a strata snapshot", 0);
  size_t p = kMagic.size();
  uint64_t version = 0, kind = 0, shard = 0, count = 0, seq = 0, created = 0;
  if (!GetVarint(block_, &p, &version)) return Bad("malformed header", 0);
  if (version != kSnapshotVersion) {
    return Status::Corruption(name_ + ": format version " + std::to_string(version) +
                              " is not supported (this build reads version " +
                              std::to_string(kSnapshotVersion) + ")");
  }
  if (!GetVarint(block_, &p, &kind) || !GetVarint(block_, &p, &shard) ||
      !GetVarint(block_, &p, &count) || !GetVarint(block_, &p, &seq) ||
      !GetFixed64(block_, &p, &created) || p != block_.size() || kind > 1 || count == 0 ||
      shard >= count || count > UINT32_MAX) {
    return Bad("malformed header", 0);
  }
  header_.version = static_cast<uint32_t>(version);
  header_.kind = static_cast<SnapshotKind>(kind);
  header_.shard = static_cast<uint32_t>(shard);
  header_.shard_count = static_cast<uint32_t>(count);
  header_.seq = seq;
  header_.created_ms = static_cast<int64_t>(created);
  ranges_.clear();
  if (header_.kind == SnapshotKind::kDelta) {
    size_t offset = pos_;
    if (pos_ >= file_.size()) return Bad("missing range block (file truncated)", offset);
    s = DecodeBlock(file_, &pos_, &block_, name_);
    if (!s.ok()) return s;
    if (block_.compare(0, kRangesMagic.size(), kRangesMagic) != 0)
      return Bad("missing range block", offset);
    ranges_ = block_.substr(kRangesMagic.size());
  }
  block_.clear();
  block_pos_ = 0;
  records_ = 0;
  done_ = false;
  return Status::Ok();
}

Status ShardSnapshotReader::Next(const SnapshotSink& sink, size_t max_records, bool* done) {
  *done = done_;
  size_t delivered = 0;
  while (!done_) {
    if (delivered >= max_records) return Status::Ok();  // resumes mid-block next call
    if (block_pos_ >= block_.size()) {
      block_offset_ = pos_;
      if (pos_ >= file_.size()) return Bad("missing trailer (file truncated)", block_offset_);
      Status s = DecodeBlock(file_, &pos_, &block_, name_);
      if (!s.ok()) return s;
      block_pos_ = 0;
      if (block_.compare(0, 3, "END") == 0 && block_.size() > 3) {
        size_t q = 3;
        uint64_t expect = 0;
        if (!GetVarint(block_, &q, &expect) || q != block_.size())
          return Bad("malformed trailer", block_offset_);
        if (expect != records_) {
          return Bad("trailer counts " + std::to_string(expect) + " records, the file holds " +
                         std::to_string(records_),
                     block_offset_);
        }
        if (pos_ != file_.size()) return Bad("bytes after the trailer", pos_);
        done_ = true;
        *done = true;
        return Status::Ok();
      }
      continue;
    }
    std::string_view b = block_;
    size_t& q = block_pos_;
    uint64_t db = 0;
    std::string_view key, value;
    uint64_t expire = 0;
    if (static_cast<uint8_t>(b[q++]) != kRecordEntry || !GetVarint(b, &q, &db) ||
        q + 2 > b.size()) {
      return Bad("malformed record", block_offset_);
    }
    uint8_t type = static_cast<uint8_t>(b[q++]);
    uint8_t flags = static_cast<uint8_t>(b[q++]);
    if (type > kTypeMax || (flags & ~(kFlagExpire | kFlagCold)) != 0 ||
        ((flags & kFlagExpire) && !GetFixed64(b, &q, &expire)) || !GetBytes(b, &q, &key) ||
        db > UINT32_MAX) {
      return Bad("malformed record", block_offset_);
    }
    int64_t exp = (flags & kFlagExpire) ? static_cast<int64_t>(expire) : Entry::kNoExpire;
    Status s;
    if (flags & kFlagCold) {
      uint64_t value_len = 0, seq = 0, disk_len = 0;
      if (!GetVarint(b, &q, &value_len) || !GetFixed64(b, &q, &seq) ||
          !GetVarint(b, &q, &disk_len) || value_len > UINT32_MAX || disk_len > UINT32_MAX) {
        return Bad("malformed cold record", block_offset_);
      }
      if (!cold_sink_) {
        return Status::InvalidArgument(
            name_ + ": holds spilled values (cold records); set spill-dir to load it");
      }
      ColdRecord c{static_cast<uint32_t>(value_len), seq, static_cast<uint32_t>(disk_len)};
      s = cold_sink_(static_cast<uint32_t>(db), static_cast<ValueType>(type), key, c, exp);
    } else {
      if (!GetBytes(b, &q, &value)) return Bad("malformed record", block_offset_);
      s = sink(static_cast<uint32_t>(db), static_cast<ValueType>(type), key, value, exp);
    }
    if (!s.ok()) return s;
    records_++;
    delivered++;
  }
  return Status::Ok();
}

Status ReadShardSnapshot(std::string_view file, std::string_view name, SnapshotHeader* header,
                         const SnapshotSink& sink) {
  ShardSnapshotReader r;
  Status s = r.Open(file, name);
  if (!s.ok()) return s;
  *header = r.header();
  bool done = false;
  while (!done) {
    s = r.Next(sink, SIZE_MAX, &done);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace strata
