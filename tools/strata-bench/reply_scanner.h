// ReplyScanner: finds where each RESP reply ends in a receive buffer and classifies it,
// without building the reply, for `strata-bench`'s hot path.
//
// A benchmark client only needs to know, per reply: was it an error, and for GET/MGET how
// many keys hit (a bulk string, or an array element that is one) and how many missed
// (nil). Scan() reads one reply from the start of a buffer; nested arrays are walked with
// an explicit depth counter, never recursion deeper than kMaxDepth. Nothing allocates.
// RESP2 and the RESP3 reply types are understood (a client that never sends HELLO 3 only
// gets RESP2). Limits: a header line longer than kMaxLine bytes, a length that does not
// parse, or nesting deeper than kMaxDepth is malformed input.
// Thread-safety: stateless functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::bench {

struct ReplyInfo {
  bool error = false;           // '-' or '!' reply
  uint32_t hits = 0;            // bulk strings at the top level or directly in an array
  uint32_t misses = 0;          // nils at the top level or directly in an array
  std::string_view error_text;  // the line of an error reply (points into the buffer)
};

enum class ScanResult { kComplete, kNeedMore, kMalformed };

inline constexpr size_t kMaxLine = 64 * 1024;
inline constexpr int kMaxDepth = 32;

// Scans one reply at the start of data[0, size). kComplete: *consumed is its length and
// *info describes it. kNeedMore: the reply is not complete yet (nothing consumed; when a
// bulk header said how long it is, *need_at_least is the total size the buffer must reach
// before scanning again is worth it, else 0). kMalformed: not RESP.
ScanResult ScanReply(const char* data, size_t size, size_t* consumed, ReplyInfo* info,
                     size_t* need_at_least);

}  // namespace strata::bench
