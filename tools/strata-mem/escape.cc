#include "tools/strata-mem/escape.h"

#include <cmath>
#include <cstdio>

namespace strata::mem {
namespace {

void AppendHex(std::string* out, const char* prefix, unsigned char c) {
  char buf[12];
  std::snprintf(buf, sizeof(buf), "%s%02x", prefix, c);
  *out += buf;
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 if there is none.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = at(i);
  size_t len;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; k++) {
    unsigned char cc = at(i + k);
    if ((cc & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not valid UTF-8.
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return len;
}

}  // namespace

std::string TextEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t len = Utf8SequenceLength(s, i);
      if (len > 0) {
        out.append(s.substr(i, len));
        i += len;
        continue;
      }
      AppendHex(&out, "\\x", c);
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      AppendHex(&out, "\\x", c);
    } else {
      out += static_cast<char>(c);
    }
    i++;
  }
  return out;
}

std::string TextEscapeTruncated(std::string_view s, size_t max_chars) {
  std::string out = TextEscape(s);
  if (max_chars < 4) return out;
  // Byte offset where each character starts; cut before character max_chars - 3.
  size_t chars = 0;
  size_t cut = std::string::npos;
  for (size_t i = 0; i < out.size(); i++) {
    if ((static_cast<unsigned char>(out[i]) & 0xc0) == 0x80) continue;
    if (chars == max_chars - 3) cut = i;
    chars++;
  }
  if (chars <= max_chars) return out;
  out.resize(cut);
  out += "...";
  return out;
}

std::string CsvField(std::string_view s) {
  bool quote = !s.empty() && (s.front() == ' ' || s.back() == ' ');
  for (char c : s) {
    if (c == ',' || c == '"' || c == '\r' || c == '\n') quote = true;
  }
  if (!quote) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t len = Utf8SequenceLength(s, i);
      if (len > 0) {
        out.append(s.substr(i, len));
        i += len;
      } else {
        AppendHex(&out, "\\u00", c);
        i++;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          AppendHex(&out, "\\u00", c);
        } else {
          out += static_cast<char>(c);
        }
    }
    i++;
  }
  out += '"';
  return out;
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : TextEscape(s)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string HumanBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = bytes;
  bool negative = v < 0;
  if (negative) v = -v;
  int unit = 0;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    unit++;
  }
  char buf[48];
  if (unit == 0) {
    std::snprintf(buf, sizeof(buf), "%s%.0f B", negative ? "-" : "", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%s%.1f %s", negative ? "-" : "", v, kUnits[unit]);
  }
  return buf;
}

std::string FormatFixed(double v, int decimals) {
  if (!std::isfinite(v)) v = 0;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

}  // namespace strata::mem
