#include "storage/dirty_ranges.h"

#include <roaring/roaring.h>

#include "storage/varint.h"

namespace strata {

RangeSet::RangeSet() : bm_(roaring_bitmap_create()) {}

RangeSet::~RangeSet() {
  if (bm_ != nullptr) roaring_bitmap_free(bm_);
}

RangeSet::RangeSet(RangeSet&& o) noexcept : bm_(o.bm_) { o.bm_ = roaring_bitmap_create(); }

RangeSet& RangeSet::operator=(RangeSet&& o) noexcept {
  if (this != &o) std::swap(bm_, o.bm_);
  return *this;
}

void RangeSet::Add(uint32_t id) { roaring_bitmap_add(bm_, id); }

void RangeSet::AddDb(uint32_t db) {
  uint64_t first = static_cast<uint64_t>(db) << kRangeBits;
  roaring_bitmap_add_range(bm_, first, first + (1ull << kRangeBits));
  roaring_bitmap_run_optimize(bm_);
}

bool RangeSet::Contains(uint32_t db, uint64_t hash) const {
  return roaring_bitmap_contains(bm_, Id(db, hash));
}

bool RangeSet::NextAtLeast(uint32_t from, uint32_t* id) const {
  roaring_uint32_iterator_t it;
  roaring_init_iterator(bm_, &it);
  if (!roaring_move_uint32_iterator_equalorlarger(&it, from)) return false;
  *id = it.current_value;
  return true;
}

void RangeSet::Merge(const RangeSet& other) { roaring_bitmap_or_inplace(bm_, other.bm_); }

uint64_t RangeSet::Cardinality() const { return roaring_bitmap_get_cardinality(bm_); }

bool RangeSet::empty() const { return roaring_bitmap_is_empty(bm_); }

size_t RangeSet::MemoryBytes() const { return roaring_bitmap_portable_size_in_bytes(bm_); }

void RangeSet::Clear() { roaring_bitmap_clear(bm_); }

void RangeSet::Encode(std::string* out) const {
  PutVarint(out, kRangeBits);
  size_t n = roaring_bitmap_portable_size_in_bytes(bm_);
  size_t at = out->size();
  out->resize(at + n);
  roaring_bitmap_portable_serialize(bm_, out->data() + at);
}

bool RangeSet::Decode(std::string_view in, RangeSet* out, std::string* error) {
  size_t pos = 0;
  uint64_t bits = 0;
  if (!GetVarint(in, &pos, &bits) || bits != kRangeBits) {
    *error = "range block: unsupported range width";
    return false;
  }
  std::string_view body = in.substr(pos);
  size_t need = roaring_bitmap_portable_deserialize_size(body.data(), body.size());
  if (need == 0 || need != body.size()) {
    *error = "range block: malformed bitmap";
    return false;
  }
  roaring_bitmap_t* bm = roaring_bitmap_portable_deserialize_safe(body.data(), body.size());
  if (bm == nullptr) {
    *error = "range block: malformed bitmap";
    return false;
  }
  roaring_bitmap_free(out->bm_);
  out->bm_ = bm;
  return true;
}

}  // namespace strata
