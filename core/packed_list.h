// PackedList: the small form of hashes, sets, sorted sets and lists (Redis's listpack
// plays this role), and the canonical serialized form of every collection.
//
// Layout: [PackedTag::kPackedList][varint item count][item]*, where an item is a
// varint length followed by that many bytes. A hash stores field, value, field,
// value...; a set its members; a sorted set member, score, ...; a list its elements.
// Items are read front to back (collections in this form are small: at most a few
// hundred items, by EncodingLimits), and every change builds a new buffer.
//
// Thread-safety: pure functions over buffers the caller owns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/object.h"

namespace strata::packed {

size_t VarintSize(uint64_t v);
void AppendVarint(std::string* out, uint64_t v);
// Reads a varint at *pos; false (and *pos unchanged) if it runs past the end.
bool ReadVarint(std::string_view s, size_t* pos, uint64_t* v);

// Iterates the items of a packed list. The buffer must come from Builder (or be checked
// with Valid() first when it comes from outside, e.g. a RESTORE payload).
class Reader {
 public:
  explicit Reader(std::string_view buf);
  size_t count() const { return count_; }
  bool Done() const { return index_ >= count_; }
  // The current item; REQUIRES: !Done().
  std::string_view Item() const { return item_; }
  void Next();

 private:
  void Load();
  std::string_view buf_;
  size_t pos_ = 0;
  size_t count_ = 0;
  size_t index_ = 0;
  std::string_view item_;
};

// True when buf is a well-formed packed list (tag, count and every length in bounds).
bool Valid(std::string_view buf);
size_t Count(std::string_view buf);

// Builds a packed list: Reserve, Add each item, then Finish.
class Builder {
 public:
  void Add(std::string_view item) {
    AppendVarint(&body_, item.size());
    body_.append(item);
    count_++;
  }
  size_t count() const { return count_; }
  size_t body_bytes() const { return body_.size(); }
  std::string Finish() const;

 private:
  std::string body_;
  size_t count_ = 0;
};

}  // namespace strata::packed
