// RequestWriter: encodes strata-bench's requests (GET, MGET, SET [EX ttl], MSET) as RESP
// multibulk commands straight into a connection's ByteBuffer, with keys named
// <prefix><decimal index> and every SET carrying the same value bytes.
//
// The prefix and value are copied once at construction; Write() formats into the
// buffer's free space (Ensure()d first) and returns the bytes written, so a steady
// workload does not allocate per request.
// Thread-safety: const after construction; one per thread (it is cheap to copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tools/strata-bench/byte_buffer.h"

namespace strata::bench {

enum class RequestKind { kGet, kMGet, kSet, kMSet };

class RequestWriter {
 public:
  RequestWriter(std::string_view key_prefix, std::string_view value);

  // Writes one request over keys[0, n) (n == 1 for kGet and kSet); ttl_s > 0 adds EX to a
  // kSet; SET/MSET values are the first value_len bytes of the value (clamped to its
  // size; SIZE_MAX: all of it). Returns the request's size in bytes.
  size_t Write(RequestKind kind, const uint64_t* keys, uint32_t n, uint32_t ttl_s, ByteBuffer* out,
               size_t value_len = SIZE_MAX) const;

  // Upper bound of Write()'s size for n keys.
  size_t MaxSize(RequestKind kind, uint32_t n) const;

 private:
  std::string prefix_;
  std::string value_;
};

}  // namespace strata::bench
