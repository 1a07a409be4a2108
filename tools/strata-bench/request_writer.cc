#include "tools/strata-bench/request_writer.h"

#include <charconv>
#include <cstring>

namespace strata::bench {
namespace {

constexpr size_t kMaxDigits = 20;  // uint64_t in decimal

// Appends "<c><n>\r\n" (a multibulk or bulk header) at p; returns the new end.
char* PutHeader(char* p, char c, uint64_t n) {
  *p++ = c;
  p = std::to_chars(p, p + kMaxDigits, n).ptr;
  *p++ = '\r';
  *p++ = '\n';
  return p;
}

char* PutBytes(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace

RequestWriter::RequestWriter(std::string_view key_prefix, std::string_view value)
    : prefix_(key_prefix), value_(value) {}

size_t RequestWriter::MaxSize(RequestKind kind, uint32_t n) const {
  const size_t header = 1 + kMaxDigits + 2;
  const size_t key = header + prefix_.size() + kMaxDigits + 2;
  const size_t value = header + value_.size() + 2;
  const size_t name = 12;  // "$4\r\nMSET\r\n" and shorter
  switch (kind) {
    case RequestKind::kGet:
      return header + name + key;
    case RequestKind::kMGet:
      return header + name + key * n;
    case RequestKind::kSet:
      return header + name + key + value + 2 * header + 4 + kMaxDigits;  // EX ttl
    case RequestKind::kMSet:
    default:
      return header + name + (key + value) * n;
  }
}

size_t RequestWriter::Write(RequestKind kind, const uint64_t* keys, uint32_t n, uint32_t ttl_s,
                            ByteBuffer* out, size_t value_len) const {
  out->Ensure(MaxSize(kind, n));
  char* const start = out->write_ptr();
  char* p = start;
  const bool with_value = kind == RequestKind::kSet || kind == RequestKind::kMSet;
  const std::string_view value(value_.data(),
                               value_len < value_.size() ? value_len : value_.size());
  uint64_t args = 1 + uint64_t{n} * (with_value ? 2 : 1);
  if (kind == RequestKind::kSet && ttl_s > 0) args += 2;
  p = PutHeader(p, '*', args);
  switch (kind) {
    case RequestKind::kGet:
      p = PutBytes(p, "$3\r\nGET\r\n");
      break;
    case RequestKind::kMGet:
      p = PutBytes(p, "$4\r\nMGET\r\n");
      break;
    case RequestKind::kSet:
      p = PutBytes(p, "$3\r\nSET\r\n");
      break;
    case RequestKind::kMSet:
      p = PutBytes(p, "$4\r\nMSET\r\n");
      break;
  }
  for (uint32_t i = 0; i < n; ++i) {
    char digits[kMaxDigits];
    const size_t len =
        static_cast<size_t>(std::to_chars(digits, digits + kMaxDigits, keys[i]).ptr - digits);
    p = PutHeader(p, '$', prefix_.size() + len);
    p = PutBytes(p, prefix_);
    p = PutBytes(p, std::string_view(digits, len));
    *p++ = '\r';
    *p++ = '\n';
    if (with_value) {
      p = PutHeader(p, '$', value.size());
      p = PutBytes(p, value);
      *p++ = '\r';
      *p++ = '\n';
    }
  }
  if (kind == RequestKind::kSet && ttl_s > 0) {
    p = PutBytes(p, "$2\r\nEX\r\n");
    char digits[kMaxDigits];
    const size_t len =
        static_cast<size_t>(std::to_chars(digits, digits + kMaxDigits, ttl_s).ptr - digits);
    p = PutHeader(p, '$', len);
    p = PutBytes(p, std::string_view(digits, len));
    *p++ = '\r';
    *p++ = '\n';
  }
  const size_t size = static_cast<size_t>(p - start);
  out->Commit(size);
  return size;
}

}  // namespace strata::bench
