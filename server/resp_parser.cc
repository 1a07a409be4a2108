#include "server/resp_parser.h"

#include <cctype>
#include <cstring>

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

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
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

bool SplitArgs(std::string_view line, std::vector<std::string>* out) {
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    while (i < n && std::isspace(static_cast<unsigned char>(line[i]))) i++;
    if (i >= n) return true;
    std::string cur;
    bool in_dq = false;
    bool in_sq = false;
    bool done = false;
    while (!done) {
      if (in_dq) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 3 < n && line[i + 1] == 'x' && HexValue(line[i + 2]) >= 0 &&
            HexValue(line[i + 3]) >= 0) {
          cur += static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3]));
          i += 3;
        } else if (line[i] == '\\' && i + 1 < n) {
          i++;
          char c = line[i];
          switch (c) {
            case 'n':
              c = '\n';
              break;
            case 'r':
              c = '\r';
              break;
            case 't':
              c = '\t';
              break;
            case 'b':
              c = '\b';
              break;
            case 'a':
              c = '\a';
              break;
            default:
              break;
          }
          cur += c;
        } else if (line[i] == '"') {
          // A closing quote must be followed by a space or the end.
          if (i + 1 < n && !std::isspace(static_cast<unsigned char>(line[i + 1]))) return false;
          done = true;
        } else {
          cur += line[i];
        }
      } else if (in_sq) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 1 < n && line[i + 1] == '\'') {
          i++;
          cur += '\'';
        } else if (line[i] == '\'') {
          if (i + 1 < n && !std::isspace(static_cast<unsigned char>(line[i + 1]))) return false;
          done = true;
        } else {
          cur += line[i];
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        switch (line[i]) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            in_dq = true;
            break;
          case '\'':
            in_sq = true;
            break;
          default:
            cur += line[i];
            break;
        }
      }
      if (i < n) i++;
    }
    out->push_back(std::move(cur));
  }
}

}  // namespace strata
