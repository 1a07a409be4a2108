#include "storage/manifest.h"

#include "storage/block.h"
#include "storage/varint.h"

namespace strata {

namespace {
constexpr std::string_view kMagic = "STRATA-MANIFEST";
}

std::string EncodeManifest(const Manifest& m) {
  bool cold = false;
  for (const ManifestLink& l : m.chain) {
    for (const ManifestFile& f : l.files) cold = cold || !f.cold.empty();
  }
  uint32_t version = !m.functions.empty() ? 3 : cold ? 2 : 1;
  std::string b(kMagic);
  PutVarint(&b, version);
  PutVarint(&b, m.seq);
  PutFixed64(&b, static_cast<uint64_t>(m.created_ms));
  PutVarint(&b, m.shard_count);
  PutVarint(&b, m.shard_hash);
  PutVarint(&b, m.range_bits);
  PutVarint(&b, m.chain.size());
  for (const ManifestLink& l : m.chain) {
    b.push_back(static_cast<char>(l.kind));
    PutVarint(&b, l.seq);
    PutFixed64(&b, static_cast<uint64_t>(l.created_ms));
    PutVarint(&b, l.files.size());
    for (const ManifestFile& f : l.files) {
      PutBytes(&b, f.name);
      PutVarint(&b, f.bytes);
      PutVarint(&b, f.records);
      PutVarint(&b, f.db_records.size());
      for (const auto& [db, n] : f.db_records) {
        PutVarint(&b, db);
        PutVarint(&b, n);
      }
      if (version >= 2) PutBytes(&b, f.cold);
    }
  }
  if (version >= 3) {
    PutVarint(&b, m.functions.size());
    for (const std::string& code : m.functions) PutBytes(&b, code);
  }
  std::string out;
  EncodeBlock(BlockCodec::kNone, b, &out);
  return out;
}

Status DecodeManifest(std::string_view data, std::string_view name, Manifest* out) {
  size_t pos = 0;
  std::string b;
  Status s = DecodeBlock(data, &pos, &b, name);
  if (!s.ok()) return s;
  auto bad = [&](std::string_view why) {
    return Status::Corruption(std::string(name) + ": " + std::string(why));
  };
  if (pos != data.size()) return bad("bytes after the manifest block");
  if (b.compare(0, kMagic.size(), kMagic) != 0) return bad("not a strata manifest");
  size_t p = kMagic.size();
  uint64_t version = 0, seq = 0, created = 0, shards = 0, hash = 0, bits = 0, links = 0;
  if (!GetVarint(b, &p, &version)) return bad("malformed manifest");
  if (version < 1 || version > kManifestVersion) {
    return bad("manifest version " + std::to_string(version) +
               " is not supported (this build reads version " + std::to_string(kManifestVersion) +
               ")");
  }
  if (!GetVarint(b, &p, &seq) || !GetFixed64(b, &p, &created) || !GetVarint(b, &p, &shards) ||
      !GetVarint(b, &p, &hash) || !GetVarint(b, &p, &bits) || !GetVarint(b, &p, &links) ||
      shards == 0 || shards > 65536 || links == 0 || links > 1u << 20) {
    return bad("malformed manifest");
  }
  if (hash != kShardHashId) return bad("unknown shard hash " + std::to_string(hash));
  Manifest m;
  m.seq = seq;
  m.created_ms = static_cast<int64_t>(created);
  m.shard_count = static_cast<uint32_t>(shards);
  m.shard_hash = static_cast<uint32_t>(hash);
  m.range_bits = static_cast<uint32_t>(bits);
  for (uint64_t i = 0; i < links; i++) {
    ManifestLink l;
    uint64_t lseq = 0, lcreated = 0, files = 0;
    if (p >= b.size()) return bad("malformed manifest");
    uint8_t kind = static_cast<uint8_t>(b[p++]);
    if (kind > 1 || (i == 0) != (kind == 0) || !GetVarint(b, &p, &lseq) ||
        !GetFixed64(b, &p, &lcreated) || !GetVarint(b, &p, &files) || files != shards) {
      return bad("malformed manifest chain");
    }
    l.kind = static_cast<SnapshotKind>(kind);
    l.seq = lseq;
    l.created_ms = static_cast<int64_t>(lcreated);
    for (uint64_t f = 0; f < files; f++) {
      ManifestFile mf;
      std::string_view fname;
      if (!GetBytes(b, &p, &fname) || !GetVarint(b, &p, &mf.bytes) ||
          !GetVarint(b, &p, &mf.records) || fname.empty() ||
          fname.find('/') != std::string_view::npos) {
        return bad("malformed manifest file entry");
      }
      uint64_t dbs = 0;
      if (!GetVarint(b, &p, &dbs) || dbs > (1u << 16)) return bad("malformed manifest file entry");
      for (uint64_t k = 0; k < dbs; k++) {
        uint64_t db = 0, n = 0;
        if (!GetVarint(b, &p, &db) || !GetVarint(b, &p, &n) || db > UINT32_MAX)
          return bad("malformed manifest file entry");
        mf.db_records.emplace_back(static_cast<uint32_t>(db), n);
      }
      if (version >= 2) {
        std::string_view cold;
        if (!GetBytes(b, &p, &cold) || cold.find('/') != std::string_view::npos) {
          return bad("malformed manifest file entry");
        }
        mf.cold = std::string(cold);
      }
      mf.name = std::string(fname);
      l.files.push_back(std::move(mf));
    }
    m.chain.push_back(std::move(l));
  }
  if (version >= 3) {
    uint64_t count = 0;
    if (!GetVarint(b, &p, &count) || count > (1u << 20)) return bad("malformed function list");
    for (uint64_t i = 0; i < count; i++) {
      std::string_view code;
      if (!GetBytes(b, &p, &code)) return bad("malformed function list");
      m.functions.emplace_back(code);
    }
  }
  if (p != b.size()) return bad("malformed manifest");
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace strata
