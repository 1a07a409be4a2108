// Checks the RDB value decoders share (rdb_value.cc, rdb_stream.cc): a claimed element
// count against the bytes left, a string blob decoded as a container, and a decode's
// result from the input's state.
// Thread-safety: pure functions over the caller's input.
#pragma once

#include <cstdint>
#include <string>

#include "storage/rdb_format.h"
#include "storage/rdb_value.h"

namespace strata::rdb {

// Elements a value may claim: each takes at least one byte of what is left.
inline bool CheckCount(RdbInput* in, uint64_t n, uint64_t at, const char* what) {
  if (n <= in->remaining()) return true;
  return in->Fail(at, std::string(what) + " claims " + std::to_string(n) + " elements with only " +
                          std::to_string(in->remaining()) + " bytes left");
}

// Reads a string blob and decodes it as a container.
template <class Decode, class Out>
bool ReadBlob(RdbInput* in, std::string* blob, Decode decode, Out* items, const char* what) {
  uint64_t at = in->offset();
  if (!in->ReadString(blob, what)) return false;
  std::string err;
  if (!decode(*blob, items, &err)) return in->Fail(at, std::string(what) + ": " + err);
  return true;
}

inline DecodeResult Finish(RdbInput* in) {
  return in->failed() ? DecodeResult::kError : DecodeResult::kOk;
}

// An 8-byte little-endian millisecond time (stream consumers, hash field TTLs).
inline bool ReadMs(RdbInput* in, int64_t* ms, const char* what) {
  uint64_t v;
  if (!in->ReadU64LE(&v, what)) return false;
  *ms = static_cast<int64_t>(v);
  return true;
}

}  // namespace strata::rdb
