// Reply and ReplyParser: RESP2 server replies, parsed from a byte buffer.
//
// The parser is stateless between calls: Parse() looks at the buffer from its start and
// either returns one complete reply (and how many bytes it used), says more bytes are
// needed (consuming nothing), or reports malformed input. needed() then tells how many
// bytes the pending reply needs at least, when a bulk header has said so, so the caller
// can read that much before trying again instead of re-parsing after every read.
// Limits (bulk length, array length, nesting depth, line length) are named in
// ReplyLimits; a reply over a limit is an error, never an allocation of that size.
// Thread-safety: a value type; one parser per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::mem {

struct Reply {
  enum class Type { kStatus, kError, kInteger, kBulk, kNil, kArray };

  Type type = Type::kNil;
  std::string str;              // kStatus, kError, kBulk
  int64_t integer = 0;          // kInteger
  std::vector<Reply> elements;  // kArray

  bool is_error() const { return type == Type::kError; }
  bool is_nil() const { return type == Type::kNil; }
  // A short description for error messages: "error 'ERR x'", "integer 5", "array of 2".
  std::string Describe() const;
};

struct ReplyLimits {
  uint64_t bulk_len_max = 512ull * 1024 * 1024;  // Redis's proto-max-bulk-len default
  int64_t array_len_max = 1ll << 26;             // elements in one array
  int depth_max = 16;                            // nested arrays
  size_t line_len_max = 64 * 1024;               // status, error, integer and header lines
};

class ReplyParser {
 public:
  enum class Result { kOk, kNeedMore, kError };

  explicit ReplyParser(ReplyLimits limits = {}) : limits_(limits) {}

  // Parses one reply from the start of `data`. kOk: *out holds it and *consumed its size.
  // kNeedMore: nothing consumed; needed() may say how many bytes are needed in total.
  // kError: the input is not RESP2; error() says why.
  Result Parse(std::string_view data, size_t* consumed, Reply* out);

  const std::string& error() const { return error_; }
  size_t needed() const { return needed_; }

 private:
  Result ParseAt(std::string_view data, size_t* pos, int depth, Reply* out);
  Result ReadLine(std::string_view data, size_t* pos, std::string_view* line);
  Result Fail(std::string msg) {
    error_ = std::move(msg);
    return Result::kError;
  }

  ReplyLimits limits_;
  std::string error_;
  size_t needed_ = 0;
};

// Parses a RESP length or integer line body ("-1", "42"); false on anything else.
bool ParseReplyInteger(std::string_view s, int64_t* out);

}  // namespace strata::mem
