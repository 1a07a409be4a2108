#include "core/string_util.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace strata {

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s.size() == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  if (s.size() - i <= 18) {
    // Up to 18 digits cannot overflow 64 bits: no check per digit (the common case:
    // every RESP length and most arguments).
    for (; i < s.size(); i++) {
      unsigned d = static_cast<unsigned char>(s[i]) - '0';
      if (d > 9) return false;
      v = v * 10 + d;
    }
  } else {
    for (; i < s.size(); i++) {
      char c = s[i];
      if (c < '0' || c > '9') return false;
      if (v > (UINT64_MAX - (c - '0')) / 10) return false;
      v = v * 10 + (c - '0');
    }
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

bool ParseUint64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s.size() > 1 && s[0] == '0') return false;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return false;
  *out = v;
  return true;
}

bool ParseLongDouble(std::string_view s, long double* out) {
  if (s.empty() || s.size() > 5000) return false;
  if (std::isspace(static_cast<unsigned char>(s[0]))) return false;
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  long double v = std::strtold(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return false;
  if (std::isnan(v)) return false;
  if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)) return false;
  *out = v;
  return true;
}

bool ParseDouble(std::string_view s, double* out) {
  if (s.empty() || s.size() > 5000) return false;
  if (std::isspace(static_cast<unsigned char>(s[0]))) return false;
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return false;
  if (std::isnan(v)) return false;
  if (errno == ERANGE && v != 0 && !std::isinf(v)) {
    // Overflow to +-HUGE_VAL from a finite literal is refused, as Redis does.
    return false;
  }
  *out = v;
  return true;
}

void AppendInt(std::string* out, int64_t v) {
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, ptr - buf);
}

std::string IntToString(int64_t v) {
  std::string s;
  AppendInt(&s, v);
  return s;
}

std::string LongDoubleToHuman(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[5600];
  int len = std::snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) return "0";
  if (std::strchr(buf, '.') != nullptr) {
    char* p = buf + len - 1;
    while (*p == '0') {
      p--;
      len--;
    }
    if (*p == '.') len--;
  }
  std::string s(buf, len);
  if (s == "-0") s = "0";
  return s;
}

std::string DoubleToString(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  int len = std::snprintf(buf, sizeof(buf), "%.17g", v);
  return std::string(buf, len);
}

std::optional<uint64_t> ParseMemory(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t digits = 0;
  while (digits < s.size() &&
         (std::isdigit(static_cast<unsigned char>(s[digits])) || (digits == 0 && s[0] == '-')))
    digits++;
  std::string_view num = s.substr(0, digits);
  std::string unit = Lowercase(s.substr(digits));
  uint64_t mul = 1;
  if (unit.empty() || unit == "b") {
    mul = 1;
  } else if (unit == "k") {
    mul = 1000;
  } else if (unit == "kb") {
    mul = 1024;
  } else if (unit == "m") {
    mul = 1000ULL * 1000;
  } else if (unit == "mb") {
    mul = 1024ULL * 1024;
  } else if (unit == "g") {
    mul = 1000ULL * 1000 * 1000;
  } else if (unit == "gb") {
    mul = 1024ULL * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  uint64_t v = 0;
  if (!ParseUint64(num, &v)) return std::nullopt;
  if (mul != 1 && v > UINT64_MAX / mul) return std::nullopt;
  return v * mul;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

void ToLower(std::string* s) {
  for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

std::string Lowercase(std::string_view s) {
  std::string out(s);
  ToLower(&out);
  return out;
}

bool ConstantTimeEquals(std::string_view guess, std::string_view secret) {
  // Every byte of the secret is compared with a byte of the guess (cycling through it),
  // and differences are OR-ed together: no early exit, no branch on the data.
  unsigned diff = guess.size() == secret.size() ? 0 : 1;
  size_t n = guess.size();
  for (size_t i = 0; i < secret.size(); i++) {
    unsigned char g = n == 0 ? 0 : static_cast<unsigned char>(guess[i % n]);
    diff |= g ^ static_cast<unsigned char>(secret[i]);
  }
  return diff == 0;
}

void AppendRepr(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char ch : s) {
    switch (ch) {
      case '\\':
      case '"':
        out->push_back('\\');
        out->push_back(static_cast<char>(ch));
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\a':
        out->append("\\a");
        break;
      case '\b':
        out->append("\\b");
        break;
      default:
        if (ch >= 0x20 && ch < 0x7f) {
          out->push_back(static_cast<char>(ch));
        } else {
          static constexpr char kHex[] = "0123456789abcdef";
          out->append("\\x");
          out->push_back(kHex[ch >> 4]);
          out->push_back(kHex[ch & 15]);
        }
    }
  }
  out->push_back('"');
}

}  // namespace strata
