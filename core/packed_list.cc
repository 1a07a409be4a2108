#include "core/packed_list.h"

namespace strata::packed {

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool ReadVarint(std::string_view s, size_t* pos, uint64_t* v) {
  uint64_t r = 0;
  int shift = 0;
  for (size_t p = *pos; p < s.size() && shift < 64; p++, shift += 7) {
    uint8_t b = static_cast<uint8_t>(s[p]);
    r |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      *pos = p + 1;
      *v = r;
      return true;
    }
  }
  return false;
}

Reader::Reader(std::string_view buf) : buf_(buf), pos_(1) {
  uint64_t n = 0;
  if (buf.empty() || !ReadVarint(buf, &pos_, &n)) n = 0;
  count_ = static_cast<size_t>(n);
  if (count_ > 0) Load();
}

void Reader::Load() {
  uint64_t len = 0;
  if (!ReadVarint(buf_, &pos_, &len) || len > buf_.size() - pos_) {
    index_ = count_;  // malformed: stop (Valid() rejects such buffers up front)
    return;
  }
  item_ = buf_.substr(pos_, static_cast<size_t>(len));
  pos_ += static_cast<size_t>(len);
}

void Reader::Next() {
  index_++;
  if (index_ < count_) Load();
}

bool Valid(std::string_view buf) {
  if (buf.empty() || static_cast<uint8_t>(buf[0]) != static_cast<uint8_t>(PackedTag::kPackedList))
    return false;
  size_t pos = 1;
  uint64_t n = 0;
  if (!ReadVarint(buf, &pos, &n)) return false;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t len = 0;
    if (!ReadVarint(buf, &pos, &len) || len > buf.size() - pos) return false;
    pos += static_cast<size_t>(len);
  }
  return pos == buf.size();
}

size_t Count(std::string_view buf) { return Reader(buf).count(); }

std::string Builder::Finish() const {
  std::string out;
  out.reserve(1 + VarintSize(count_) + body_.size());
  out.push_back(static_cast<char>(PackedTag::kPackedList));
  AppendVarint(&out, count_);
  out.append(body_);
  return out;
}

}  // namespace strata::packed
