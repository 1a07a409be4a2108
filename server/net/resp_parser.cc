#include "server/net/resp_parser.h"

#include <algorithm>
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
[[gnu::always_inline]] inline const char* FastLenLine(const char* p, const char* end,
                                                      int64_t* out) {
  if (end - p >= 4) [[likely]] {
    // One to three digits, the usual argument count and the usual argument's length
    // (a key's, a value's of up to 999 bytes), without the loop.
    unsigned d0 = static_cast<unsigned>(static_cast<unsigned char>(p[0])) - '0';
    if (d0 <= 9) {
      if (p[1] == '\r') {
        if (p[2] != '\n') return nullptr;
        *out = d0;
        return p + 1;
      }
      unsigned d1 = static_cast<unsigned>(static_cast<unsigned char>(p[1])) - '0';
      if (d1 <= 9 && d0 != 0) {
        if (p[2] == '\r') {
          if (p[3] != '\n') return nullptr;
          *out = d0 * 10 + d1;
          return p + 2;
        }
        unsigned d2 = static_cast<unsigned>(static_cast<unsigned char>(p[2])) - '0';
        if (d2 <= 9 && end - p >= 5 && p[3] == '\r' && p[4] == '\n') {
          *out = d0 * 100 + d1 * 10 + d2;
          return p + 3;
        }
      }
    }
  }
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

RespParser::Result RespParser::Suspend(const char* data, int64_t count, const char* next,
                                       std::vector<std::string_view>* args) {
  if (!resuming_) {
    resuming_ = true;
    count_ = count;
    offsets_.clear();
  }
  // (No exact reserve here: growth must stay geometric across many suspends.)
  for (std::string_view a : *args)
    offsets_.emplace_back(static_cast<size_t>(a.data() - data), a.size());
  args->clear();
  next_ = static_cast<size_t>(next - data);
  return Result::kNeedMore;
}

RespParser::Result RespParser::ParseMultibulk(const char* data, size_t len,
                                              const RespLimits& limits, size_t* consumed,
                                              std::vector<std::string_view>* args) {
  const char* end = data + len;
  int64_t count = 0;
  const char* p = nullptr;
  if (resuming_) {
    // The same request as last time, with more bytes: continue after the last argument.
    count = count_;
    p = data + next_;
  } else {
    canonical_ = true;
    const char* crlf = FastLenLine(data + 1, end, &count);
    if (crlf == nullptr) {
      canonical_ = false;
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
    if (limits.unauthenticated && count > RespLimits::kUnauthenticatedMultibulkMax)
      return Fail("Protocol error: unauthenticated multibulk length");
    p = crlf + 2;
    if (count <= 0) {
      // "*0" and "*-1" are empty requests: consumed, nothing to run.
      *consumed = p - data;
      return Result::kOk;
    }
  }
  size_t have = offsets_.size();
  int64_t missing = count - static_cast<int64_t>(have);
  if (args->capacity() < static_cast<size_t>(std::min<int64_t>(missing, 1024)))
    args->reserve(std::min<int64_t>(missing, 1024));
  for (int64_t i = 0; i < missing; i++) {
    if (p >= end) return Suspend(data, count, p, args);
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
      canonical_ = false;
      lcrlf = FindCrlf(p, end);
      if (lcrlf == nullptr) {
        if (static_cast<size_t>(end - p) > limits.inline_len_max)
          return Fail("Protocol error: too big bulk count string");
        return Suspend(data, count, p, args);
      }
      if (static_cast<size_t>(lcrlf - p) > limits.inline_len_max)
        return Fail("Protocol error: too big bulk count string");
      if (!ParseLenLine(p + 1, lcrlf, &blen)) return Fail("Protocol error: invalid bulk length");
    }
    if (blen < 0 || static_cast<uint64_t>(blen) > limits.bulk_len_max)
      return Fail("Protocol error: invalid bulk length");
    if (limits.unauthenticated && static_cast<uint64_t>(blen) > RespLimits::kUnauthenticatedBulkMax)
      return Fail("Protocol error: unauthenticated bulk length");
    const char* body = lcrlf + 2;
    if (static_cast<size_t>(end - body) < static_cast<size_t>(blen) + 2) {
      // Remember how much the whole request needs at least, for one buffer resize.
      needed_ = (body - data) + static_cast<size_t>(blen) + 2;
      return Suspend(data, count, p, args);
    }
    args->emplace_back(body, static_cast<size_t>(blen));
    p = body + blen + 2;  // Redis does not check the trailing CRLF bytes either
  }
  if (resuming_) {
    // The arguments of earlier reads, then those of this one, as views of this buffer.
    std::vector<std::string_view> tail;
    tail.swap(*args);
    args->reserve(offsets_.size() + tail.size());
    for (auto [off, n] : offsets_) args->emplace_back(data + off, n);
    args->insert(args->end(), tail.begin(), tail.end());
    resuming_ = false;
    offsets_.clear();
    offsets_.shrink_to_fit();
  }
  *consumed = p - data;
  return Result::kOk;
}

RespParser::Result RespParser::ParseInline(const char* data, size_t len, const RespLimits& limits,
                                           size_t* consumed, std::vector<std::string_view>* args) {
  canonical_ = false;
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
