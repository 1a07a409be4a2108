#include "storage/rdb_input.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "storage/lzf.h"

namespace strata {

bool RdbInput::Fail(uint64_t at, const std::string& what) {
  if (error_.empty()) error_ = "at byte " + std::to_string(at) + ": " + what;
  return false;
}

bool RdbInput::Need(size_t n, const char* what) {
  if (!error_.empty()) return false;
  if (data_.size() - pos_ >= n) return true;
  return Fail(offset(), std::string("the input ends inside ") + what + " (" + std::to_string(n) +
                            " bytes needed, " + std::to_string(data_.size() - pos_) + " left)");
}

bool RdbInput::ReadByte(uint8_t* out, const char* what) {
  if (!Need(1, what)) return false;
  *out = static_cast<uint8_t>(data_[pos_++]);
  return true;
}

bool RdbInput::ReadBytes(size_t n, std::string_view* out, const char* what) {
  if (!Need(n, what)) return false;
  *out = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool RdbInput::ReadU16LE(uint16_t* out, const char* what) {
  if (!Need(2, what)) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(data_.data() + pos_);
  *out = static_cast<uint16_t>(p[0] | p[1] << 8);
  pos_ += 2;
  return true;
}

bool RdbInput::ReadU32LE(uint32_t* out, const char* what) {
  if (!Need(4, what)) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(data_.data() + pos_);
  *out = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
  pos_ += 4;
  return true;
}

bool RdbInput::ReadU64LE(uint64_t* out, const char* what) {
  if (!Need(8, what)) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(data_.data() + pos_);
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  *out = v;
  pos_ += 8;
  return true;
}

bool RdbInput::ReadLength(uint64_t* out, int* encoding, const char* what) {
  uint64_t at = offset();
  uint8_t b;
  if (!ReadByte(&b, what)) return false;
  *encoding = -1;
  *out = 0;
  switch (b >> 6) {
    case 0:
      *out = b & 0x3f;
      return true;
    case 1: {
      uint8_t lo;
      if (!ReadByte(&lo, what)) return false;
      *out = static_cast<uint64_t>(b & 0x3f) << 8 | lo;
      return true;
    }
    case 2: {
      int n = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
      if (n == 0) {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "0x%02x", b);
        return Fail(at, std::string("unknown length encoding ") + hex + " in " + what);
      }
      std::string_view v;
      if (!ReadBytes(static_cast<size_t>(n), &v, what)) return false;
      uint64_t len = 0;
      for (char c : v) len = len << 8 | static_cast<unsigned char>(c);
      *out = len;
      return true;
    }
    default:
      *encoding = b & 0x3f;
      return true;
  }
}

bool RdbInput::ReadLength(uint64_t* out, const char* what) {
  uint64_t at = offset();
  int enc;
  if (!ReadLength(out, &enc, what)) return false;
  if (enc != -1)
    return Fail(at, std::string("a string encoding where a length was expected (") + what + ")");
  return true;
}

bool RdbInput::ReadString(std::string* out, const char* what) {
  uint64_t at = offset();
  uint64_t len;
  int enc;
  if (!ReadLength(&len, &enc, what)) return false;
  switch (enc) {
    case -1: {
      if (len > max_string_) {
        return Fail(at, std::string(what) + " of " + std::to_string(len) +
                            " bytes is over the limit of " + std::to_string(max_string_));
      }
      std::string_view v;
      if (!ReadBytes(static_cast<size_t>(len), &v, what)) return false;
      out->assign(v);
      return true;
    }
    case kEncInt8: {
      uint8_t b;
      if (!ReadByte(&b, what)) return false;
      *out = std::to_string(static_cast<int8_t>(b));
      return true;
    }
    case kEncInt16: {
      uint16_t v;
      if (!ReadU16LE(&v, what)) return false;
      *out = std::to_string(static_cast<int16_t>(v));
      return true;
    }
    case kEncInt32: {
      uint32_t v;
      if (!ReadU32LE(&v, what)) return false;
      *out = std::to_string(static_cast<int32_t>(v));
      return true;
    }
    case kEncLzf: {
      uint64_t clen, ulen;
      if (!ReadLength(&clen, what) || !ReadLength(&ulen, what)) return false;
      if (ulen > max_string_) {
        return Fail(at, std::string(what) + " of " + std::to_string(ulen) +
                            " bytes is over the limit of " + std::to_string(max_string_));
      }
      // LZF expands at most 88 times (a 3-byte reference makes 264 bytes); a claim
      // beyond that cannot be met and would only allocate.
      if (ulen > clen * 140 + 32) {
        return Fail(at, std::string("the compressed ") + what + " of " + std::to_string(clen) +
                            " bytes claims " + std::to_string(ulen) + " bytes");
      }
      uint64_t data_at = offset();
      std::string_view packed;
      if (!ReadBytes(static_cast<size_t>(clen), &packed, what)) return false;
      std::string err;
      if (!lzf::Decompress(packed, static_cast<size_t>(ulen), out, &err)) {
        return Fail(data_at, std::string("the compressed ") + what + " is damaged (" + err + ")");
      }
      return true;
    }
    default:
      return Fail(at, "unknown string encoding " + std::to_string(enc) + " in " + what);
  }
}

bool RdbInput::SkipString(const char* what) {
  uint64_t at = offset();
  uint64_t len;
  int enc;
  if (!ReadLength(&len, &enc, what)) return false;
  std::string_view v;
  switch (enc) {
    case -1:
      if (len > max_string_) {
        return Fail(at, std::string(what) + " of " + std::to_string(len) +
                            " bytes is over the limit of " + std::to_string(max_string_));
      }
      return ReadBytes(static_cast<size_t>(len), &v, what);
    case kEncInt8:
      return ReadBytes(1, &v, what);
    case kEncInt16:
      return ReadBytes(2, &v, what);
    case kEncInt32:
      return ReadBytes(4, &v, what);
    case kEncLzf: {
      uint64_t clen, ulen;
      if (!ReadLength(&clen, what) || !ReadLength(&ulen, what)) return false;
      return ReadBytes(static_cast<size_t>(clen), &v, what);
    }
    default:
      return Fail(at, "unknown string encoding " + std::to_string(enc) + " in " + what);
  }
}

bool RdbInput::ReadBinaryDouble(double* out, const char* what) {
  uint64_t bits;
  if (!ReadU64LE(&bits, what)) return false;
  std::memcpy(out, &bits, 8);
  return true;
}

bool RdbInput::ReadTextDouble(double* out, const char* what) {
  uint64_t at = offset();
  uint8_t len;
  if (!ReadByte(&len, what)) return false;
  if (len == 253) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (len == 254) {
    *out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (len == 255) {
    *out = -std::numeric_limits<double>::infinity();
    return true;
  }
  std::string_view v;
  if (!ReadBytes(len, &v, what)) return false;
  std::string text(v);
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return Fail(at, std::string("'") + text + "' is not a number (" + what + ")");
  }
  return true;
}

}  // namespace strata
