#include "server/net/resp_parser.h"

#include <cstring>

#include "core/split_args.h"
#include "core/string_util.h"

namespace strata {
namespace {

const char* FindCrlf(const char* p, const char* end) {
  while (p < end) {
    const char* cr = static_cast<const char*>(std::memchr(p, '\r', end - p));
    if (cr == nullptr || cr + 1 >= end) return nullptr;
    if (cr[1] == '\n') return cr;
    p = cr + 1;
  }
  return nullptr;
}

bool ParseLenLine(const char* p, const char* crlf, int64_t* out) {
  return ParseInt64(std::string_view(p, crlf - p), out);
}

// The common length line: 1 to 18 digits without a leading zero, then CRLF, all present.
// Returns the position of the CR and the value; nullptr for anything else (a sign, a
// leading zero, junk, a line not complete yet), which the general path then handles.
inline const char* FastLenLine(const char* p, const char* end, int64_t* out) {
  const char* q = p;
  uint64_t v = 0;
  while (q + 1 < end && q - p <= 18) {
    unsigned d = static_cast<unsigned>(static_cast<unsigned char>(*q)) - '0';
    if (d > 9) break;
    v = v * 10 + d;
    q++;
  }
  if (q == p || q + 1 >= end || q - p > 18 || q[0] != '\r' || q[1] != '\n') return nullptr;
  if (*p == '0' && q - p > 1) return nullptr;
  *out = static_cast<int64_t>(v);
  return q;
}
}  // namespace

RespParser::Result RespParser::Parse(const char* data, size_t len, const RespLimits& limits,
                                     size_t* consumed, std::vector<std::string_view>* args) {
  args->clear();
  needed_ = 0;
  *consumed = 0;
  if (len == 0) return Result::kNeedMore;
  if (data[0] == '*') return ParseMultibulk(data, len, limits, consumed, args);
  return ParseInline(data, len, limits, consumed, args);
}

RespParser::Result RespParser::ParseMultibulk(const char* data, size_t len,
                                              const RespLimits& limits, size_t* consumed,
                                              std::vector<std::string_view>* args) {
  const char* end = data + len;
  int64_t count = 0;
  const char* crlf = FastLenLine(data + 1, end, &count);
  if (crlf == nullptr) {
    crlf = FindCrlf(data, end);
    if (crlf == nullptr) {
      if (len > limits.inline_len_max) return Fail("Protocol error: too big mbulk count string");
      return Result::kNeedMore;
    }
    if (static_cast<size_t>(crlf - data) > limits.inline_len_max)
      return Fail("Protocol error: too big mbulk count string");
    if (!ParseLenLine(data + 1, crlf, &count))
      return Fail("Protocol error: invalid multibulk length");
  }
  if (count > limits.multibulk_len_max) return Fail("Protocol error: invalid multibulk length");
  const char* p = crlf + 2;
  if (count <= 0) {
    // "*0" and "*-1" are empty requests: consumed, nothing to run.
    *consumed = p - data;
    return Result::kOk;
  }
  if (args->capacity() < static_cast<size_t>(std::min<int64_t>(count, 1024)))
    args->reserve(std::min<int64_t>(count, 1024));
  for (int64_t i = 0; i < count; i++) {
    if (p >= end) return Result::kNeedMore;
    if (*p != '$') {
      char got = *p;
      std::string msg = "Protocol error: expected '$', got '";
      msg += got;
      msg += "'";
      return Fail(msg);
    }
    int64_t blen = 0;
    const char* lcrlf = FastLenLine(p + 1, end, &blen);
    if (lcrlf == nullptr) {
      lcrlf = FindCrlf(p, end);
      if (lcrlf == nullptr) {
        if (static_cast<size_t>(end - p) > limits.inline_len_max)
          return Fail("Protocol error: too big bulk count string");
        return Result::kNeedMore;
      }
      if (static_cast<size_t>(lcrlf - p) > limits.inline_len_max)
        return Fail("Protocol error: too big bulk count string");
      if (!ParseLenLine(p + 1, lcrlf, &blen)) return Fail("Protocol error: invalid bulk length");
    }
    if (blen < 0 || static_cast<uint64_t>(blen) > limits.bulk_len_max)
      return Fail("Protocol error: invalid bulk length");
    const char* body = lcrlf + 2;
    if (static_cast<size_t>(end - body) < static_cast<size_t>(blen) + 2) {
      // Remember how much the whole request needs at least, for one buffer resize.
      needed_ = (body - data) + static_cast<size_t>(blen) + 2;
      return Result::kNeedMore;
    }
    args->emplace_back(body, static_cast<size_t>(blen));
    p = body + blen + 2;  // Redis does not check the trailing CRLF bytes either
  }
  *consumed = p - data;
  return Result::kOk;
}

RespParser::Result RespParser::ParseInline(const char* data, size_t len, const RespLimits& limits,
                                           size_t* consumed, std::vector<std::string_view>* args) {
  const char* nl = static_cast<const char*>(std::memchr(data, '\n', len));
  if (nl == nullptr) {
    if (len > limits.inline_len_max) return Fail("Protocol error: too big inline request");
    return Result::kNeedMore;
  }
  size_t line_len = nl - data;
  if (line_len > limits.inline_len_max) return Fail("Protocol error: too big inline request");
  std::string_view line(data, line_len);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  inline_storage_.clear();
  if (!SplitArgs(line, &inline_storage_))
    return Fail("Protocol error: unbalanced quotes in request");
  for (const std::string& s : inline_storage_) args->emplace_back(s);
  *consumed = line_len + 1;
  return Result::kOk;
}

}  // namespace strata
