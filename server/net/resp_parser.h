// RespParser: parses one client request (RESP multibulk or inline) at a time.
//
// Arguments are returned as views into the caller's buffer (multibulk) so nothing is
// copied; inline requests, whose arguments may need unquoting, are copied into the
// parser's own storage. A request that is not complete yet returns kNeedMore without
// consuming anything; the caller appends more bytes and calls again. needed() then
// says how many bytes the request needs in total when that is known (a large bulk),
// so the buffer can be grown once.
//
// Errors use Redis's exact "Protocol error: ..." texts; after kError the connection
// must reply the error and close.
// Thread-safety: one parser per connection, used by the connection's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct RespLimits {
  uint64_t bulk_len_max = 512ull * 1024 * 1024;  // proto-max-bulk-len
  int64_t multibulk_len_max = INT32_MAX;         // Redis 7 accepts up to INT_MAX
  size_t inline_len_max = 64 * 1024;             // PROTO_INLINE_MAX_SIZE
};

class RespParser {
 public:
  enum class Result { kOk, kNeedMore, kError };

  Result Parse(const char* data, size_t len, const RespLimits& limits, size_t* consumed,
               std::vector<std::string_view>* args);

  const std::string& error() const { return error_; }
  // Total bytes the pending request needs, when known; 0 otherwise.
  size_t needed() const { return needed_; }

 private:
  Result ParseMultibulk(const char* data, size_t len, const RespLimits& limits, size_t* consumed,
                        std::vector<std::string_view>* args);
  Result ParseInline(const char* data, size_t len, const RespLimits& limits, size_t* consumed,
                     std::vector<std::string_view>* args);
  Result Fail(std::string msg) {
    error_ = std::move(msg);
    return Result::kError;
  }

  std::string error_;
  size_t needed_ = 0;
  std::vector<std::string> inline_storage_;
};

}  // namespace strata
