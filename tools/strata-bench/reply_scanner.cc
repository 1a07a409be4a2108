#include "tools/strata-bench/reply_scanner.h"

#include <cstring>

namespace strata::bench {
namespace {

// Parses a RESP length or integer line ("-1", "42"); false on anything else.
bool ParseLength(const char* p, size_t n, int64_t* out) {
  if (n == 0 || n > 20) return false;
  bool negative = false;
  size_t i = 0;
  if (p[0] == '-') {
    negative = true;
    i = 1;
    if (n == 1) return false;
  }
  int64_t v = 0;
  for (; i < n; ++i) {
    const unsigned d = static_cast<unsigned char>(p[i]) - '0';
    if (d > 9) return false;
    if (v > (INT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = negative ? -v : v;
  return true;
}

}  // namespace

ScanResult ScanReply(const char* data, size_t size, size_t* consumed, ReplyInfo* info,
                     size_t* need_at_least) {
  *info = ReplyInfo{};
  *need_at_least = 0;
  // remaining[d]: elements still expected at nesting level d (level 0: the one reply).
  int64_t remaining[kMaxDepth + 1];
  bool attribute[kMaxDepth + 1];
  int depth = 0;
  remaining[0] = 1;
  attribute[0] = false;
  size_t pos = 0;
  for (;;) {
    if (pos >= size) return ScanResult::kNeedMore;
    const char type = data[pos];
    const size_t line_start = pos + 1;
    const size_t search = size - line_start < kMaxLine + 1 ? size - line_start : kMaxLine + 1;
    const char* cr = static_cast<const char*>(std::memchr(data + line_start, '\r', search));
    if (cr == nullptr) {
      return search > kMaxLine ? ScanResult::kMalformed : ScanResult::kNeedMore;
    }
    const size_t line_len = static_cast<size_t>(cr - (data + line_start));
    const size_t line_end = line_start + line_len;  // index of '\r'
    if (line_end + 1 >= size) return ScanResult::kNeedMore;
    if (data[line_end + 1] != '\n') return ScanResult::kMalformed;
    size_t next = line_end + 2;
    const bool direct = depth <= 1;  // top level, or directly inside the top-level array

    bool scalar_done = true;
    switch (type) {
      case '+':  // simple string
      case ':':  // integer
      case ',':  // double
      case '#':  // boolean
      case '(':  // big number
        break;
      case '-':  // simple error
        if (depth == 0) {
          info->error = true;
          info->error_text = std::string_view(data + line_start, line_len);
        }
        break;
      case '_':  // RESP3 null
        if (direct) ++info->misses;
        break;
      case '$':    // bulk string
      case '=':    // verbatim string
      case '!': {  // blob error
        int64_t len = 0;
        if (!ParseLength(data + line_start, line_len, &len) || len < -1) {
          return ScanResult::kMalformed;
        }
        if (len == -1) {
          if (type != '$') return ScanResult::kMalformed;
          if (direct) ++info->misses;
          break;
        }
        const size_t end = next + static_cast<size_t>(len) + 2;
        if (end > size) {
          *need_at_least = end;
          return ScanResult::kNeedMore;
        }
        if (data[end - 2] != '\r' || data[end - 1] != '\n') return ScanResult::kMalformed;
        if (type == '!') {
          if (depth == 0) {
            info->error = true;
            info->error_text = std::string_view(data + next, static_cast<size_t>(len));
          }
        } else if (direct) {
          ++info->hits;
        }
        next = end;
        break;
      }
      case '*':    // array
      case '~':    // set
      case '>':    // push
      case '%':    // map
      case '|': {  // attribute
        int64_t count = 0;
        if (!ParseLength(data + line_start, line_len, &count) || count < -1) {
          return ScanResult::kMalformed;
        }
        if (count == -1) {
          if (type != '*') return ScanResult::kMalformed;
          if (direct) ++info->misses;
          break;
        }
        if (type == '%' || type == '|') {
          if (count > INT64_MAX / 2) return ScanResult::kMalformed;
          count *= 2;
        }
        if (count == 0) {
          if (type == '|') scalar_done = false;  // an empty attribute precedes the reply
          break;
        }
        if (depth == kMaxDepth) return ScanResult::kMalformed;
        ++depth;
        remaining[depth] = count;
        attribute[depth] = type == '|';
        scalar_done = false;
        break;
      }
      default:
        return ScanResult::kMalformed;
    }
    pos = next;
    if (!scalar_done) continue;
    // One element finished: close every aggregate it completes. An attribute does not
    // count as an element of its parent (the reply it annotates follows it).
    --remaining[depth];
    while (remaining[depth] == 0) {
      if (depth == 0) {
        *consumed = pos;
        return ScanResult::kComplete;
      }
      const bool was_attribute = attribute[depth];
      --depth;
      if (!was_attribute) --remaining[depth];
    }
  }
}

}  // namespace strata::bench
