#include "server/net/reply_builder.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/string_util.h"
#include "server/net/error_stats.h"

namespace strata {

namespace {

// Writes n in decimal at p; returns the end. Lengths and counts below 10000 (most of
// them) take no division loop.
inline char* WriteLength(char* p, size_t n) {
  if (n < 10) {
    *p++ = static_cast<char>('0' + n);
    return p;
  }
  if (n < 100) {
    *p++ = static_cast<char>('0' + n / 10);
    *p++ = static_cast<char>('0' + n % 10);
    return p;
  }
  if (n < 1000) {
    *p++ = static_cast<char>('0' + n / 100);
    *p++ = static_cast<char>('0' + n / 10 % 10);
    *p++ = static_cast<char>('0' + n % 10);
    return p;
  }
  if (n < 10000) {
    *p++ = static_cast<char>('0' + n / 1000);
    *p++ = static_cast<char>('0' + n / 100 % 10);
    *p++ = static_cast<char>('0' + n / 10 % 10);
    *p++ = static_cast<char>('0' + n % 10);
    return p;
  }
  return std::to_chars(p, p + 24, n).ptr;
}

}  // namespace

void ReplyBuilder::Header(char type, size_t n) {
  char buf[32];
  buf[0] = type;
  char* ptr = WriteLength(buf + 1, n);
  *ptr++ = '\r';
  *ptr++ = '\n';
  out_->append(buf, ptr - buf);
}

void ReplyBuilder::Simple(std::string_view s) {
  out_->push_back('+');
  out_->append(s);
  out_->append("\r\n", 2);
}

void ReplyBuilder::Error(std::string_view msg) {
  if (ErrorStats* stats = ErrorStats::ForThisThread(); stats != nullptr) stats->Count(msg);
  ErrorUncounted(msg);
}

void ReplyBuilder::ErrorUncounted(std::string_view msg) {
  out_->push_back('-');
  size_t start = out_->size();
  out_->append(msg);
  for (size_t i = start; i < out_->size(); i++) {
    if ((*out_)[i] == '\r' || (*out_)[i] == '\n') (*out_)[i] = ' ';
  }
  out_->append("\r\n", 2);
}

void ReplyBuilder::Integer(int64_t v) {
  char buf[32];
  buf[0] = ':';
  auto [ptr, ec] = std::to_chars(buf + 1, buf + sizeof(buf) - 2, v);
  *ptr++ = '\r';
  *ptr++ = '\n';
  out_->append(buf, ptr - buf);
}

void ReplyBuilder::Bulk(std::string_view s) {
  size_t n = s.size();
  if (n <= kSmallBulk) {
    // One append for the whole reply: header, bytes and CRLF.
    char buf[kSmallBulk + 8];
    char* p = buf;
    *p++ = '$';
    p = WriteLength(p, n);
    *p++ = '\r';
    *p++ = '\n';
    if (n != 0) std::memcpy(p, s.data(), n);  // an empty view may hold a null pointer
    p += n;
    *p++ = '\r';
    *p++ = '\n';
    out_->append(buf, p - buf);
    return;
  }
  Header('$', n);
  out_->append(s);
  out_->append("\r\n", 2);
}

void ReplyBuilder::BulkValue(const Entry& e) {
  size_t n = e.ValueLen();
  if (n <= kSmallValue) {
    // GET's reply of a small value: the header, the value and its CRLF assembled on the
    // stack and added in one append (a resize would zero-fill the bytes first).
    char buf[kSmallValue + 16];
    buf[0] = '$';
    char* end = WriteLength(buf + 1, n);
    end[0] = '\r';
    end[1] = '\n';
    char* d = end + 2;
    e.CopyValue(d);
    d[n] = '\r';
    d[n + 1] = '\n';
    out_->append(buf, static_cast<size_t>(d + n + 2 - buf));
    return;
  }
  // A larger value: the header, the value and its CRLF in one growth of the output.
  char hdr[32];
  hdr[0] = '$';
  char* end = WriteLength(hdr + 1, n);
  end[0] = '\r';
  end[1] = '\n';
  size_t h = static_cast<size_t>(end + 2 - hdr);
  size_t at = out_->size();
  out_->resize(at + h + n + 2);
  char* d = out_->data() + at;
  std::memcpy(d, hdr, h);
  e.CopyValue(d + h);
  d[h + n] = '\r';
  d[h + n + 1] = '\n';
}

void ReplyBuilder::Null() {
  if (resp_ >= 3) {
    out_->append("_\r\n", 3);
  } else {
    out_->append("$-1\r\n", 5);
  }
}

void ReplyBuilder::NullArray() {
  if (resp_ >= 3) {
    out_->append("_\r\n", 3);
  } else {
    out_->append("*-1\r\n", 5);
  }
}

void ReplyBuilder::Map(size_t n) {
  if (resp_ >= 3) {
    Header('%', n);
  } else {
    Header('*', 2 * n);
  }
}

void ReplyBuilder::Set(size_t n) { Header(resp_ >= 3 ? '~' : '*', n); }

void ReplyBuilder::Double(double v) {
  std::string s;
  if (std::isinf(v)) {
    s = v > 0 ? "inf" : "-inf";
  } else {
    s = DoubleToString(v);
  }
  DoubleText(s);
}

void ReplyBuilder::HumanDouble(long double v) { DoubleText(LongDoubleToHuman(v)); }

void ReplyBuilder::DoubleText(std::string_view s) {
  if (resp_ >= 3) {
    out_->push_back(',');
    out_->append(s);
    out_->append("\r\n", 2);
  } else {
    Bulk(s);
  }
}

void ReplyBuilder::Bool(bool v) {
  if (resp_ >= 3) {
    out_->append(v ? "#t\r\n" : "#f\r\n", 4);
  } else {
    Integer(v ? 1 : 0);
  }
}

void ReplyBuilder::Verbatim(std::string_view text) {
  if (resp_ >= 3) {
    Header('=', text.size() + 4);
    out_->append("txt:", 4);
    out_->append(text);
    out_->append("\r\n", 2);
  } else {
    Bulk(text);
  }
}

}  // namespace strata
