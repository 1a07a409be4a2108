// RespParser: parses one client request (RESP multibulk or inline) at a time.
//
// Arguments are returned as views into the caller's buffer (multibulk) so nothing is
// copied; inline requests, whose arguments may need unquoting, are copied into the
// parser's own storage. A request that is not complete yet returns kNeedMore without
// consuming anything; the caller appends more bytes and calls again with the same
// request at the start of `data` (the buffer may have moved or grown meanwhile).
// needed() then says how many bytes the request needs in total when that is known (a
// large bulk), so the buffer can be grown once.
//
// Resuming: a multibulk request that arrives in many reads is parsed once, not again
// from its start at every read. After kNeedMore the parser keeps the argument count, the
// offsets of the arguments it has and where the next one starts (offsets from the
// request's start, so they survive the buffer moving); the next call continues there.
// A request of n arguments arriving in r reads costs O(n + r), whatever r is.
//
// Before authentication (RespLimits::unauthenticated) Redis's tighter limits apply: a
// multibulk of more than 10 arguments or a bulk of more than 16 KB is refused with its
// own error, so an unauthenticated client can make the server hold or scan little.
//
// Errors use Redis's exact "Protocol error: ..." texts; after kError the connection
// must reply the error and close.
// Thread-safety: one parser per connection, used by the connection's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata {

struct RespLimits {
  // Redis's limits for a client that still has to authenticate (networking.c).
  static constexpr int64_t kUnauthenticatedMultibulkMax = 10;
  static constexpr uint64_t kUnauthenticatedBulkMax = 16 * 1024;

  uint64_t bulk_len_max = 512ull * 1024 * 1024;  // proto-max-bulk-len
  int64_t multibulk_len_max = INT32_MAX;         // Redis 7 accepts up to INT_MAX
  size_t inline_len_max = 64 * 1024;             // PROTO_INLINE_MAX_SIZE
  bool unauthenticated = false;                  // a password is required and not given
};

class RespParser {
 public:
  enum class Result { kOk, kNeedMore, kError };

  Result Parse(const char* data, size_t len, const RespLimits& limits, size_t* consumed,
               std::vector<std::string_view>* args);

  const std::string& error() const { return error_; }
  // Total bytes the pending request needs, when known; 0 otherwise.
  size_t needed() const { return needed_; }
  // After kOk: true when the request was a multibulk whose every length line had the
  // canonical form (digits, no sign, no leading zero). Its bytes are then the RESP
  // encoding of its arguments, except for what follows each bulk (Redis does not check
  // those two bytes either), which a user of the raw bytes checks itself.
  bool canonical() const { return canonical_; }

 private:
  Result ParseMultibulk(const char* data, size_t len, const RespLimits& limits, size_t* consumed,
                        std::vector<std::string_view>* args);
  Result ParseInline(const char* data, size_t len, const RespLimits& limits, size_t* consumed,
                     std::vector<std::string_view>* args);
  Result Fail(std::string msg) {
    error_ = std::move(msg);
    resuming_ = false;
    offsets_.clear();
    return Result::kError;
  }
  // Keeps what a multibulk parsed so far, as offsets from the request start, and where
  // the next argument starts; returns kNeedMore.
  Result Suspend(const char* data, int64_t count, const char* next,
                 std::vector<std::string_view>* args);

  std::string error_;
  size_t needed_ = 0;
  bool canonical_ = false;
  std::vector<std::string> inline_storage_;

  // A multibulk request in progress (see "Resuming" above).
  bool resuming_ = false;
  int64_t count_ = 0;                               // its argument count
  size_t next_ = 0;                                 // offset of the next argument's '$'
  std::vector<std::pair<size_t, size_t>> offsets_;  // offset and length of each argument
};

}  // namespace strata
