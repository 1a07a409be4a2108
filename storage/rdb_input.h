// RdbInput: a bounded cursor over RDB bytes (a file's or a DUMP payload's) with the
// RDB's primitive encodings (docs/FORMAT.md "RDB"):
//   - lengths: 6 bits (00xxxxxx), 14 bits (01xxxxxx + a byte, big-endian), 32 bits
//     (0x80 + 4 bytes, big-endian) or 64 bits (0x81 + 8 bytes, big-endian); 11xxxxxx
//     marks a special string encoding instead (below);
//   - strings: a length and the bytes, or an integer (8, 16 or 32 bits, little-endian,
//     read back as its decimal text), or LZF (compressed length, length, data);
//   - doubles: 8 bytes little-endian (RDB 8 on), or the old text form (a length byte,
//     253/254/255 for nan/+inf/-inf);
//   - little-endian fixed-width integers (expiry times, listpack headers).
// Every read checks the bytes left and every declared length against limits, so a
// damaged or hostile input fails with an error naming the offset and what was expected
// there (Error()), never reads out of bounds or allocates what the input merely claims.
// After an error every further read fails and the first error stays.
//
// Thread-safety: none; one reader per cursor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

class RdbInput {
 public:
  // base_offset: the offset of data[0] in the whole input (for error messages when the
  // input arrives in pieces).
  explicit RdbInput(std::string_view data, uint64_t base_offset = 0)
      : data_(data), base_(base_offset) {}

  // Bytes a string may take; a longer declared length is an error (proto-max-bulk-len).
  void set_max_string_bytes(uint64_t n) { max_string_ = n; }

  bool ReadByte(uint8_t* out, const char* what);
  bool ReadBytes(size_t n, std::string_view* out, const char* what);
  bool ReadU16LE(uint16_t* out, const char* what);
  bool ReadU32LE(uint32_t* out, const char* what);
  bool ReadU64LE(uint64_t* out, const char* what);
  // A length; *encoding is -1 for a plain length, else the special string encoding
  // (0 int8, 1 int16, 2 int32, 3 LZF) and *out is 0.
  bool ReadLength(uint64_t* out, int* encoding, const char* what);
  // A plain length (a special encoding there is an error).
  bool ReadLength(uint64_t* out, const char* what);
  // A string in any of its encodings.
  bool ReadString(std::string* out, const char* what);
  // Steps over a string in any encoding without decoding it (an LZF string's data is
  // not decompressed, only its lengths checked).
  bool SkipString(const char* what);
  // The binary double (8 bytes), and the old text form.
  bool ReadBinaryDouble(double* out, const char* what);
  bool ReadTextDouble(double* out, const char* what);

  uint64_t offset() const { return base_ + pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  // Fails the cursor with "at byte <offset>: <what>" (for callers' own checks).
  bool Fail(uint64_t at, const std::string& what);

  static constexpr int kEncInt8 = 0;
  static constexpr int kEncInt16 = 1;
  static constexpr int kEncInt32 = 2;
  static constexpr int kEncLzf = 3;

 private:
  bool Need(size_t n, const char* what);

  std::string_view data_;
  uint64_t base_;
  size_t pos_ = 0;
  uint64_t max_string_ = uint64_t{512} << 20;
  std::string error_;
};

}  // namespace strata
