// The packed containers that RDB values embed as strings: Redis's ziplist, listpack,
// zipmap and intset (docs/FORMAT.md "RDB"), decoded into their elements with every
// length, count and terminator checked against the blob; and the listpack encoder the
// RDB writer uses.
//
// A decoded element is a view into the blob, or an integer (ziplists and listpacks
// store integer-looking strings as integers; Text() turns one back into its decimal
// form). Errors say what is wrong and at which byte of the blob.
//
// Thread-safety: pure functions over buffers the caller owns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::rdb {

struct PackedItem {
  std::string_view str;  // when !is_int
  int64_t num = 0;       // when is_int
  bool is_int = false;
  // The element as a string: str, or num's decimal text written to buf.
  std::string_view Text(char (&buf)[24]) const;
};

// Each appends the elements to *out, or returns false with *error set. max_items bounds
// how many elements a blob may claim (a hostile count is refused before it allocates).
bool DecodeZiplist(std::string_view blob, std::vector<PackedItem>* out, std::string* error);
bool DecodeListpack(std::string_view blob, std::vector<PackedItem>* out, std::string* error);
// A zipmap yields field, value, field, value...
bool DecodeZipmap(std::string_view blob, std::vector<PackedItem>* out, std::string* error);
// An intset's members (strictly ascending, as Redis requires).
bool DecodeIntset(std::string_view blob, std::vector<int64_t>* out, std::string* error);

// Redis's string2ll test: a canonical decimal (no '+', no leading zero, no "-0") that
// fits int64. Such strings are stored as integers in listpacks and intsets.
bool CanonicalInt(std::string_view s, int64_t* v);

// Builds a listpack: Add each element (integers as listpacks store them, like
// lpAppend), then Finish for the blob.
class ListpackBuilder {
 public:
  ListpackBuilder();
  void Add(std::string_view s);
  void AddInt(int64_t v);
  size_t count() const { return count_; }
  // Bytes the blob has so far (header included, terminator not).
  size_t bytes() const { return buf_.size(); }
  std::string Finish();

 private:
  void AppendBacklen(size_t entry_len);
  std::string buf_;
  size_t count_ = 0;
};

// Builds an intset blob from sorted, distinct values.
std::string EncodeIntset(const std::vector<int64_t>& sorted);

}  // namespace strata::rdb
