// Block: the checksummed, optionally compressed unit that snapshot files are made of.
//
// Layout (all integers little-endian; varints are LEB128):
//   u8      codec          0 none, 1 LZ4, 2 zstd
//   varint  raw length     bytes after decompression (at most kBlockRawMax)
//   varint  stored length  bytes that follow
//   bytes   stored         the payload, compressed with `codec`
//   u32     crc32c         over every preceding byte of the block
// A block whose compressed form would not be at least 1/16 smaller is stored with codec 0. Decoding
// checks the lengths against what remains of the input, the checksum before anything
// is decompressed, and the decompressed size against the raw length, and names the
// offset of the block in every error, so a truncated or corrupt file is refused with a
// message saying where.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/status.h"

namespace strata {

enum class BlockCodec : uint8_t { kNone = 0, kLz4 = 1, kZstd = 2 };

// The largest block payload accepted, before compression.
constexpr size_t kBlockRawMax = 1024 * 1024 * 1024;

// Parses "none", "lz4" or "zstd" (the snapshot-compression setting).
bool ParseBlockCodec(std::string_view name, BlockCodec* out);
const char* BlockCodecName(BlockCodec c);

// Appends one block holding `raw` (REQUIRES: raw.size() <= kBlockRawMax). Returns the
// codec used: kNone when compressing would save less than 1/16 of the bytes.
BlockCodec EncodeBlock(BlockCodec codec, std::string_view raw, std::string* out);

// Decodes the block at data[*pos]. On success sets *raw and advances *pos past it;
// `what` (a file name) and the offset name the place in error messages.
Status DecodeBlock(std::string_view data, size_t* pos, std::string* raw, std::string_view what);

}  // namespace strata
