#include "storage/block.h"

#include <lz4.h>
#include <zstd.h>

#include <cstring>

#include "storage/crc32c.h"
#include "storage/varint.h"

namespace strata {

namespace {

constexpr int kZstdLevel = 3;

Status Corrupt(std::string_view what, size_t offset, std::string_view why) {
  return Status::Corruption(std::string(what) + ": " + std::string(why) +
                            " in the block at offset " + std::to_string(offset));
}

}  // namespace

bool ParseBlockCodec(std::string_view name, BlockCodec* out) {
  if (name == "none") {
    *out = BlockCodec::kNone;
  } else if (name == "lz4") {
    *out = BlockCodec::kLz4;
  } else if (name == "zstd") {
    *out = BlockCodec::kZstd;
  } else {
    return false;
  }
  return true;
}

const char* BlockCodecName(BlockCodec c) {
  switch (c) {
    case BlockCodec::kNone:
      return "none";
    case BlockCodec::kLz4:
      return "lz4";
    case BlockCodec::kZstd:
      return "zstd";
  }
  return "unknown";
}

BlockCodec EncodeBlock(BlockCodec codec, std::string_view raw, std::string* out) {
  std::string stored;
  if (codec == BlockCodec::kLz4 && !raw.empty()) {
    stored.resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
    int n = LZ4_compress_default(raw.data(), stored.data(), static_cast<int>(raw.size()),
                                 static_cast<int>(stored.size()));
    stored.resize(n > 0 ? static_cast<size_t>(n) : 0);
  } else if (codec == BlockCodec::kZstd && !raw.empty()) {
    stored.resize(ZSTD_compressBound(raw.size()));
    size_t n = ZSTD_compress(stored.data(), stored.size(), raw.data(), raw.size(), kZstdLevel);
    stored.resize(ZSTD_isError(n) ? 0 : n);
  }
  // Saving less than 1/16 is not worth a decompression at load time.
  bool plain =
      codec == BlockCodec::kNone || stored.empty() || stored.size() > raw.size() - raw.size() / 16;
  if (plain) codec = BlockCodec::kNone;
  std::string_view payload = plain ? raw : std::string_view(stored);
  size_t start = out->size();
  out->push_back(static_cast<char>(codec));
  PutVarint(out, raw.size());
  PutVarint(out, payload.size());
  out->append(payload);
  uint32_t crc = crc32c::Extend(0, out->data() + start, out->size() - start);
  char le[4] = {static_cast<char>(crc), static_cast<char>(crc >> 8), static_cast<char>(crc >> 16),
                static_cast<char>(crc >> 24)};
  out->append(le, 4);
  return codec;
}

Status DecodeBlock(std::string_view data, size_t* pos, std::string* raw, std::string_view what) {
  size_t start = *pos;
  size_t p = start;
  if (p >= data.size()) return Corrupt(what, start, "truncated (no block header)");
  auto codec = static_cast<BlockCodec>(static_cast<uint8_t>(data[p++]));
  uint64_t raw_len = 0, stored_len = 0;
  if (!GetVarint(data, &p, &raw_len) || !GetVarint(data, &p, &stored_len)) {
    return Corrupt(what, start, "truncated block header");
  }
  if (raw_len > kBlockRawMax) return Corrupt(what, start, "block length over the limit");
  if (stored_len > data.size() - p || data.size() - p - stored_len < 4) {
    return Corrupt(what, start, "truncated block");
  }
  size_t payload = p;
  p += stored_len;
  uint32_t expect = static_cast<uint32_t>(static_cast<uint8_t>(data[p])) |
                    static_cast<uint32_t>(static_cast<uint8_t>(data[p + 1])) << 8 |
                    static_cast<uint32_t>(static_cast<uint8_t>(data[p + 2])) << 16 |
                    static_cast<uint32_t>(static_cast<uint8_t>(data[p + 3])) << 24;
  if (crc32c::Extend(0, data.data() + start, p - start) != expect) {
    return Corrupt(what, start, "checksum mismatch");
  }
  std::string_view stored = data.substr(payload, stored_len);
  switch (codec) {
    case BlockCodec::kNone:
      if (stored_len != raw_len) return Corrupt(what, start, "length mismatch");
      raw->assign(stored);
      break;
    case BlockCodec::kLz4: {
      raw->resize(raw_len);
      int n = LZ4_decompress_safe(stored.data(), raw->data(), static_cast<int>(stored.size()),
                                  static_cast<int>(raw_len));
      if (n < 0 || static_cast<uint64_t>(n) != raw_len) {
        return Corrupt(what, start, "LZ4 data does not decompress to its length");
      }
      break;
    }
    case BlockCodec::kZstd: {
      raw->resize(raw_len);
      size_t n = ZSTD_decompress(raw->data(), raw_len, stored.data(), stored.size());
      if (ZSTD_isError(n) || n != raw_len) {
        return Corrupt(what, start, "zstd data does not decompress to its length");
      }
      break;
    }
    default:
      return Corrupt(what, start, "unknown codec");
  }
  *pos = p + 4;
  return Status::Ok();
}

}  // namespace strata
