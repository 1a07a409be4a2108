#include "storage/rdb_containers.h"

#include <charconv>
#include <cstring>
#include <limits>

#include "core/set_type.h"

namespace strata::rdb {

namespace {

uint32_t U16(const unsigned char* p) { return p[0] | p[1] << 8; }
uint32_t U32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
uint64_t U64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

// A little-endian signed integer of 1, 2, 3, 4 or 8 bytes (ziplists and listpacks).
int64_t SignedLE(const unsigned char* d, size_t w) {
  switch (w) {
    case 1:
      return static_cast<int8_t>(d[0]);
    case 2:
      return static_cast<int16_t>(U16(d));
    case 3:
      return static_cast<int32_t>(static_cast<uint32_t>(d[0] | d[1] << 8 | d[2] << 16) << 8) >> 8;
    case 4:
      return static_cast<int32_t>(U32(d));
    default:
      return static_cast<int64_t>(U64(d));
  }
}

bool Bad(std::string* error, const char* what, size_t at) {
  *error = std::string(what) + " at byte " + std::to_string(at) + " of the blob";
  return false;
}

}  // namespace

std::string_view PackedItem::Text(char (&buf)[24]) const {
  if (!is_int) return str;
  auto r = std::to_chars(buf, buf + sizeof(buf), num);
  return std::string_view(buf, static_cast<size_t>(r.ptr - buf));
}

bool CanonicalInt(std::string_view s, int64_t* v) { return intset::ToInt(s, v); }

bool DecodeZiplist(std::string_view blob, std::vector<PackedItem>* out, std::string* error) {
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t n = blob.size();
  if (n < 11) return Bad(error, "ziplist shorter than its header and end byte", 0);
  if (U32(p) != n) return Bad(error, "ziplist total bytes differ from its length", 0);
  const uint32_t tail = U32(p + 4);
  const uint32_t count = U16(p + 8);
  if (p[n - 1] != 0xff) return Bad(error, "ziplist does not end with 0xff", n - 1);
  size_t pos = 10;
  size_t prev_len = 0;
  size_t last_start = 10;
  size_t items = 0;
  while (pos < n - 1) {
    const size_t start = pos;
    // prevlen
    size_t prevlen;
    if (p[pos] < 254) {
      prevlen = p[pos];
      pos += 1;
    } else if (p[pos] == 254) {
      if (n - 1 - pos < 5) return Bad(error, "ziplist entry's prevlen runs past the end", pos);
      prevlen = U32(p + pos + 1);
      pos += 5;
    } else {
      return Bad(error, "ziplist entry's prevlen is 0xff", pos);
    }
    if (prevlen != prev_len) return Bad(error, "ziplist entry's prevlen is wrong", start);
    if (pos >= n - 1) return Bad(error, "ziplist entry has no encoding byte", pos);
    const unsigned char e = p[pos];
    PackedItem it;
    size_t left = n - 1 - pos;
    if ((e >> 6) == 0 || (e >> 6) == 1 || e == 0x80) {
      size_t hdr, len;
      if ((e >> 6) == 0) {
        hdr = 1;
        len = e & 0x3f;
      } else if ((e >> 6) == 1) {
        if (left < 2) return Bad(error, "ziplist string header runs past the end", pos);
        hdr = 2;
        len = static_cast<size_t>(e & 0x3f) << 8 | p[pos + 1];
      } else {
        if (left < 5) return Bad(error, "ziplist string header runs past the end", pos);
        hdr = 5;
        len = static_cast<size_t>(p[pos + 1]) << 24 | static_cast<size_t>(p[pos + 2]) << 16 |
              static_cast<size_t>(p[pos + 3]) << 8 | p[pos + 4];
      }
      if (left - hdr < len) return Bad(error, "ziplist string runs past the end", pos);
      it.str = blob.substr(pos + hdr, len);
      pos += hdr + len;
    } else {
      it.is_int = true;
      size_t w;
      switch (e) {
        case 0xc0:
          w = 2;
          break;
        case 0xd0:
          w = 4;
          break;
        case 0xe0:
          w = 8;
          break;
        case 0xf0:
          w = 3;
          break;
        case 0xfe:
          w = 1;
          break;
        default:
          if (e >= 0xf1 && e <= 0xfd) {
            w = 0;
            break;
          }
          return Bad(error, "ziplist entry has an unknown encoding", pos);
      }
      if (left < 1 + w) return Bad(error, "ziplist integer runs past the end", pos);
      const unsigned char* d = p + pos + 1;
      it.num = w == 0 ? (e & 0x0f) - 1 : SignedLE(d, w);
      pos += 1 + w;
    }
    if (++items > blob.size()) return Bad(error, "ziplist has more entries than bytes", start);
    out->push_back(it);
    prev_len = pos - start;
    last_start = start;
  }
  if (tail != last_start) return Bad(error, "ziplist tail offset is wrong", 4);
  if (count != 0xffff && count != items) return Bad(error, "ziplist entry count is wrong", 8);
  return true;
}

bool DecodeListpack(std::string_view blob, std::vector<PackedItem>* out, std::string* error) {
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t n = blob.size();
  if (n < 7) return Bad(error, "listpack shorter than its header and end byte", 0);
  if (U32(p) != n) return Bad(error, "listpack total bytes differ from its length", 0);
  const uint32_t count = U16(p + 4);
  if (p[n - 1] != 0xff) return Bad(error, "listpack does not end with 0xff", n - 1);
  size_t pos = 6;
  size_t items = 0;
  while (pos < n - 1) {
    const size_t start = pos;
    const size_t left = n - 1 - pos;
    const unsigned char e = p[pos];
    PackedItem it;
    size_t len;  // encoding + data
    if ((e & 0x80) == 0) {
      it.is_int = true;
      it.num = e & 0x7f;
      len = 1;
    } else if ((e & 0xc0) == 0x80) {
      size_t sl = e & 0x3f;
      len = 1 + sl;
      if (left < len) return Bad(error, "listpack string runs past the end", pos);
      it.str = blob.substr(pos + 1, sl);
    } else if ((e & 0xe0) == 0xc0) {
      if (left < 2) return Bad(error, "listpack integer runs past the end", pos);
      int64_t u = static_cast<int64_t>(e & 0x1f) << 8 | p[pos + 1];
      it.is_int = true;
      it.num = u >= 4096 ? u - 8192 : u;
      len = 2;
    } else if ((e & 0xf0) == 0xe0) {
      if (left < 2) return Bad(error, "listpack string header runs past the end", pos);
      size_t sl = static_cast<size_t>(e & 0x0f) << 8 | p[pos + 1];
      len = 2 + sl;
      if (left < len) return Bad(error, "listpack string runs past the end", pos);
      it.str = blob.substr(pos + 2, sl);
    } else if (e == 0xf0) {
      if (left < 5) return Bad(error, "listpack string header runs past the end", pos);
      size_t sl = U32(p + pos + 1);
      if (left - 5 < sl) return Bad(error, "listpack string runs past the end", pos);
      len = 5 + sl;
      it.str = blob.substr(pos + 5, sl);
    } else if (e >= 0xf1 && e <= 0xf4) {
      static constexpr size_t kWidth[] = {2, 3, 4, 8};
      size_t w = kWidth[e - 0xf1];
      if (left < 1 + w) return Bad(error, "listpack integer runs past the end", pos);
      const unsigned char* d = p + pos + 1;
      it.is_int = true;
      it.num = SignedLE(d, w);
      len = 1 + w;
    } else {
      return Bad(error, "listpack entry has an unknown encoding", pos);
    }
    // The back length: len in 7-bit groups, most significant first, every byte but
    // the first with the top bit set.
    size_t bl = len <= 127 ? 1 : len < 16383 ? 2 : len < 2097151 ? 3 : len < 268435455 ? 4 : 5;
    if (left - len < bl) return Bad(error, "listpack entry's back length runs past the end", pos);
    size_t v = 0;
    const unsigned char* b = p + pos + len;
    for (size_t i = 0; i < bl; i++) {
      bool more_expected = i > 0;
      if (((b[i] & 0x80) != 0) != more_expected) {
        return Bad(error, "listpack entry's back length is malformed", pos + len);
      }
      v = v << 7 | (b[i] & 0x7f);
    }
    if (v != len) return Bad(error, "listpack entry's back length is wrong", pos + len);
    pos += len + bl;
    if (++items > n) return Bad(error, "listpack has more entries than bytes", start);
    out->push_back(it);
  }
  if (count != 0xffff && count != items) return Bad(error, "listpack entry count is wrong", 4);
  return true;
}

bool DecodeZipmap(std::string_view blob, std::vector<PackedItem>* out, std::string* error) {
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t n = blob.size();
  if (n < 2) return Bad(error, "zipmap shorter than its count and end byte", 0);
  const unsigned count = p[0];
  size_t pos = 1;
  size_t pairs = 0;
  auto read_len = [&](size_t* len) {
    if (pos >= n) return false;
    if (p[pos] < 254) {
      *len = p[pos];
      pos += 1;
      return true;
    }
    if (p[pos] == 254 && n - pos >= 5) {
      *len = U32(p + pos + 1);
      pos += 5;
      return true;
    }
    return false;
  };
  while (true) {
    if (pos >= n) return Bad(error, "zipmap has no end byte", pos);
    if (p[pos] == 0xff) break;
    size_t klen, vlen;
    if (!read_len(&klen)) return Bad(error, "zipmap key length is malformed", pos);
    if (n - pos < klen) return Bad(error, "zipmap key runs past the end", pos);
    PackedItem k;
    k.str = blob.substr(pos, klen);
    pos += klen;
    if (!read_len(&vlen)) return Bad(error, "zipmap value length is malformed", pos);
    if (pos >= n) return Bad(error, "zipmap value has no free byte", pos);
    size_t free = p[pos++];
    if (n - pos < vlen || n - pos - vlen < free) {
      return Bad(error, "zipmap value runs past the end", pos);
    }
    PackedItem v;
    v.str = blob.substr(pos, vlen);
    pos += vlen + free;
    out->push_back(k);
    out->push_back(v);
    pairs++;
  }
  if (pos != n - 1) return Bad(error, "zipmap has bytes after its end byte", pos);
  if (count < 254 && count != pairs) return Bad(error, "zipmap entry count is wrong", 0);
  return true;
}

bool DecodeIntset(std::string_view blob, std::vector<int64_t>* out, std::string* error) {
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  if (blob.size() < 8) return Bad(error, "intset shorter than its header", 0);
  const uint32_t width = U32(p);
  const uint32_t count = U32(p + 4);
  if (width != 2 && width != 4 && width != 8) return Bad(error, "intset width is not 2, 4 or 8", 0);
  if ((blob.size() - 8) / width != count || (blob.size() - 8) % width != 0) {
    return Bad(error, "intset length differs from its count", 4);
  }
  out->reserve(out->size() + count);
  for (uint32_t i = 0; i < count; i++) {
    const unsigned char* d = p + 8 + static_cast<size_t>(i) * width;
    int64_t v = width == 2   ? static_cast<int16_t>(U16(d))
                : width == 4 ? static_cast<int32_t>(U32(d))
                             : static_cast<int64_t>(U64(d));
    if (i > 0 && v <= out->back()) return Bad(error, "intset members are not ascending", d - p);
    out->push_back(v);
  }
  return true;
}

ListpackBuilder::ListpackBuilder() { buf_.assign(6, '\0'); }

void ListpackBuilder::AppendBacklen(size_t l) {
  char b[5];
  size_t n;
  if (l <= 127) {
    b[0] = static_cast<char>(l);
    n = 1;
  } else if (l < 16383) {
    b[0] = static_cast<char>(l >> 7);
    b[1] = static_cast<char>((l & 127) | 128);
    n = 2;
  } else if (l < 2097151) {
    b[0] = static_cast<char>(l >> 14);
    b[1] = static_cast<char>(((l >> 7) & 127) | 128);
    b[2] = static_cast<char>((l & 127) | 128);
    n = 3;
  } else if (l < 268435455) {
    b[0] = static_cast<char>(l >> 21);
    b[1] = static_cast<char>(((l >> 14) & 127) | 128);
    b[2] = static_cast<char>(((l >> 7) & 127) | 128);
    b[3] = static_cast<char>((l & 127) | 128);
    n = 4;
  } else {
    b[0] = static_cast<char>(l >> 28);
    b[1] = static_cast<char>(((l >> 21) & 127) | 128);
    b[2] = static_cast<char>(((l >> 14) & 127) | 128);
    b[3] = static_cast<char>(((l >> 7) & 127) | 128);
    b[4] = static_cast<char>((l & 127) | 128);
    n = 5;
  }
  buf_.append(b, n);
}

void ListpackBuilder::AddInt(int64_t v) {
  char b[9];
  size_t n;
  if (v >= 0 && v <= 127) {
    b[0] = static_cast<char>(v);
    n = 1;
  } else if (v >= -4096 && v <= 4095) {
    uint64_t u = v < 0 ? static_cast<uint64_t>((int64_t{1} << 13) + v) : static_cast<uint64_t>(v);
    b[0] = static_cast<char>((u >> 8) | 0xc0);
    b[1] = static_cast<char>(u & 0xff);
    n = 2;
  } else if (v >= -32768 && v <= 32767) {
    uint64_t u = static_cast<uint64_t>(v);
    b[0] = static_cast<char>(0xf1);
    b[1] = static_cast<char>(u & 0xff);
    b[2] = static_cast<char>((u >> 8) & 0xff);
    n = 3;
  } else if (v >= -8388608 && v <= 8388607) {
    uint64_t u = static_cast<uint64_t>(v);
    b[0] = static_cast<char>(0xf2);
    for (int i = 0; i < 3; i++) b[1 + i] = static_cast<char>((u >> (8 * i)) & 0xff);
    n = 4;
  } else if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
    uint64_t u = static_cast<uint64_t>(v);
    b[0] = static_cast<char>(0xf3);
    for (int i = 0; i < 4; i++) b[1 + i] = static_cast<char>((u >> (8 * i)) & 0xff);
    n = 5;
  } else {
    uint64_t u = static_cast<uint64_t>(v);
    b[0] = static_cast<char>(0xf4);
    for (int i = 0; i < 8; i++) b[1 + i] = static_cast<char>((u >> (8 * i)) & 0xff);
    n = 9;
  }
  buf_.append(b, n);
  AppendBacklen(n);
  count_++;
}

void ListpackBuilder::Add(std::string_view s) {
  int64_t v;
  if (CanonicalInt(s, &v)) {
    AddInt(v);
    return;
  }
  size_t len = s.size();
  size_t hdr;
  if (len < 64) {
    buf_.push_back(static_cast<char>(0x80 | len));
    hdr = 1;
  } else if (len < 4096) {
    buf_.push_back(static_cast<char>(0xe0 | (len >> 8)));
    buf_.push_back(static_cast<char>(len & 0xff));
    hdr = 2;
  } else {
    buf_.push_back(static_cast<char>(0xf0));
    for (int i = 0; i < 4; i++) buf_.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
    hdr = 5;
  }
  buf_.append(s);
  AppendBacklen(hdr + len);
  count_++;
}

std::string ListpackBuilder::Finish() {
  buf_.push_back(static_cast<char>(0xff));
  uint32_t total = static_cast<uint32_t>(buf_.size());
  for (int i = 0; i < 4; i++) buf_[i] = static_cast<char>((total >> (8 * i)) & 0xff);
  uint32_t num = count_ < 65535 ? static_cast<uint32_t>(count_) : 65535;
  buf_[4] = static_cast<char>(num & 0xff);
  buf_[5] = static_cast<char>(num >> 8);
  std::string out;
  out.swap(buf_);
  buf_.assign(6, '\0');
  count_ = 0;
  return out;
}

std::string EncodeIntset(const std::vector<int64_t>& sorted) {
  uint32_t width = 2;
  for (int64_t v : sorted) {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      width = 8;
      break;
    }
    if (v < -32768 || v > 32767) width = 4;
  }
  std::string out;
  out.reserve(8 + sorted.size() * width);
  auto put = [&](uint64_t u, int bytes) {
    for (int i = 0; i < bytes; i++) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  };
  put(width, 4);
  put(sorted.size(), 4);
  for (int64_t v : sorted) put(static_cast<uint64_t>(v), static_cast<int>(width));
  return out;
}

}  // namespace strata::rdb
