#include "tools/strata-mem/reply.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace strata::mem {

std::string Reply::Describe() const {
  switch (type) {
    case Type::kStatus:
      return "status '" + str + "'";
    case Type::kError:
      return "error '" + str + "'";
    case Type::kInteger:
      return "integer " + std::to_string(integer);
    case Type::kBulk:
      return "bulk string of " + std::to_string(str.size()) + " bytes";
    case Type::kNil:
      return "nil";
    case Type::kArray:
      return "array of " + std::to_string(elements.size());
  }
  return "unknown reply";
}

bool ParseReplyInteger(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  bool negative = s[0] == '-';
  size_t i = negative ? 1 : 0;
  if (i == s.size()) return false;
  uint64_t v = 0;
  for (; i < s.size(); i++) {
    char c = s[i];
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  uint64_t max = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (v > max) return false;
  *out = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

ReplyParser::Result ReplyParser::Parse(std::string_view data, size_t* consumed, Reply* out) {
  needed_ = 0;
  // The reply a pipeline of writes gets most: no allocation for it.
  if (data.size() >= 5 && data.compare(0, 5, "+OK\r\n") == 0) {
    out->type = Reply::Type::kStatus;
    out->str.assign("OK", 2);
    out->integer = 0;
    out->elements.clear();
    *consumed = 5;
    return Result::kOk;
  }
  size_t pos = 0;
  Reply reply;
  Result r = ParseAt(data, &pos, 0, &reply);
  if (r == Result::kOk) {
    *consumed = pos;
    *out = std::move(reply);
  }
  return r;
}

ReplyParser::Result ReplyParser::ReadLine(std::string_view data, size_t* pos,
                                          std::string_view* line) {
  size_t start = *pos;
  size_t nl = data.find("\r\n", start);
  if (nl == std::string_view::npos) {
    if (data.size() - start > limits_.line_len_max) {
      return Fail("reply line longer than " + std::to_string(limits_.line_len_max) + " bytes");
    }
    return Result::kNeedMore;
  }
  if (nl - start > limits_.line_len_max) {
    return Fail("reply line longer than " + std::to_string(limits_.line_len_max) + " bytes");
  }
  *line = data.substr(start, nl - start);
  *pos = nl + 2;
  return Result::kOk;
}

ReplyParser::Result ReplyParser::ParseAt(std::string_view data, size_t* pos, int depth,
                                         Reply* out) {
  if (*pos >= data.size()) return Result::kNeedMore;
  char kind = data[*pos];
  std::string_view line;
  size_t next = *pos;  // ReadLine moves it past the header line
  Result r = ReadLine(data, &next, &line);
  if (r != Result::kOk) return r;
  switch (kind) {
    case '+':
      out->type = Reply::Type::kStatus;
      out->str.assign(line.substr(1));
      *pos = next;
      return Result::kOk;
    case '-':
      out->type = Reply::Type::kError;
      out->str.assign(line.substr(1));
      *pos = next;
      return Result::kOk;
    case ':': {
      int64_t v;
      if (!ParseReplyInteger(line.substr(1), &v)) {
        return Fail("malformed integer reply '" + std::string(line.substr(0, 32)) + "'");
      }
      out->type = Reply::Type::kInteger;
      out->integer = v;
      *pos = next;
      return Result::kOk;
    }
    case '$': {
      int64_t len;
      if (!ParseReplyInteger(line.substr(1), &len) || len < -1) {
        return Fail("malformed bulk length '" + std::string(line.substr(0, 32)) + "'");
      }
      if (len == -1) {
        out->type = Reply::Type::kNil;
        *pos = next;
        return Result::kOk;
      }
      if (static_cast<uint64_t>(len) > limits_.bulk_len_max) {
        return Fail("bulk reply of " + std::to_string(len) + " bytes exceeds the limit of " +
                    std::to_string(limits_.bulk_len_max));
      }
      size_t end = next + static_cast<size_t>(len);
      if (data.size() < end + 2) {
        needed_ = end + 2;
        return Result::kNeedMore;
      }
      if (data[end] != '\r' || data[end + 1] != '\n') {
        return Fail("bulk reply not terminated by CRLF");
      }
      out->type = Reply::Type::kBulk;
      out->str.assign(data.substr(next, static_cast<size_t>(len)));
      *pos = end + 2;
      return Result::kOk;
    }
    case '*': {
      int64_t n;
      if (!ParseReplyInteger(line.substr(1), &n) || n < -1) {
        return Fail("malformed array length '" + std::string(line.substr(0, 32)) + "'");
      }
      if (n == -1) {
        out->type = Reply::Type::kNil;
        *pos = next;
        return Result::kOk;
      }
      if (n > limits_.array_len_max) {
        return Fail("array reply of " + std::to_string(n) + " elements exceeds the limit of " +
                    std::to_string(limits_.array_len_max));
      }
      if (depth + 1 > limits_.depth_max) {
        return Fail("array replies nested deeper than " + std::to_string(limits_.depth_max));
      }
      out->type = Reply::Type::kArray;
      out->elements.clear();
      // Each element takes at least 3 bytes, so a huge count with little data waits for
      // data instead of reserving memory up front.
      size_t reserve = std::min<size_t>(static_cast<size_t>(n), (data.size() - next) / 3);
      out->elements.reserve(reserve);
      size_t p = next;
      for (int64_t i = 0; i < n; i++) {
        Reply element;
        r = ParseAt(data, &p, depth + 1, &element);
        if (r != Result::kOk) return r;
        out->elements.push_back(std::move(element));
      }
      *pos = p;
      return Result::kOk;
    }
    default: {
      unsigned char c = static_cast<unsigned char>(kind);
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02x", c);
      return Fail(std::string("unexpected reply type byte ") + hex +
                  " (not a RESP2 server, or a protocol mismatch)");
    }
  }
}

}  // namespace strata::mem
