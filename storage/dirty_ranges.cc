#include "storage/dirty_ranges.h"

#include <roaring/roaring.h>

#include <algorithm>

#include "storage/varint.h"

namespace strata {

RangeSet::RangeSet(uint32_t bits) : bm_(roaring_bitmap_create()), bits_(bits) {}

uint32_t RangeSet::BitsFor(uint32_t databases) {
  uint32_t db_bits = 0;
  while (db_bits < 32 && (uint64_t{1} << db_bits) < databases) db_bits++;
  uint32_t bits = 32 - db_bits;
  return bits > kMaxRangeBits ? kMaxRangeBits : bits < kMinRangeBits ? kMinRangeBits : bits;
}

RangeSet::~RangeSet() {
  if (bm_ != nullptr) roaring_bitmap_free(bm_);
}

RangeSet::RangeSet(RangeSet&& o) noexcept : bm_(o.bm_), bits_(o.bits_) {
  o.bm_ = roaring_bitmap_create();
}

RangeSet& RangeSet::operator=(RangeSet&& o) noexcept {
  if (this != &o) {
    std::swap(bm_, o.bm_);
    std::swap(bits_, o.bits_);
  }
  return *this;
}

void RangeSet::Add(uint32_t id) { roaring_bitmap_add(bm_, id); }

void RangeSet::AddDb(uint32_t db) {
  uint64_t first = static_cast<uint64_t>(db) << bits_;
  roaring_bitmap_add_range(bm_, first, first + (1ull << bits_));
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

bool RangeSet::AllIn(uint32_t first, uint32_t last) const {
  if (last < first) return false;
  uint64_t want = uint64_t{last} - first + 1;
  return roaring_bitmap_range_cardinality(bm_, first, uint64_t{last} + 1) == want;
}

uint32_t RangeSet::RunEnd(uint32_t id) const {
  uint32_t db_last = id | ((1u << bits_) - 1);
  // Gallop: the run reaches id + step - 1 while that span is all in; then halve back.
  uint32_t end = id;  // known in
  uint64_t step = 1;
  while (end < db_last) {
    uint64_t to = std::min<uint64_t>(uint64_t{end} + step, db_last);
    if (!AllIn(end + 1, static_cast<uint32_t>(to))) break;
    end = static_cast<uint32_t>(to);
    step *= 2;
  }
  for (; step > 0; step /= 2) {
    uint64_t to = uint64_t{end} + step;
    if (to <= db_last && AllIn(end + 1, static_cast<uint32_t>(to))) end = static_cast<uint32_t>(to);
  }
  return end;
}

void RangeSet::Merge(const RangeSet& other) {
  if (other.bits_ == bits_) {
    roaring_bitmap_or_inplace(bm_, other.bm_);
    return;
  }
  // Another width: each of its ranges, as the ranges of this width that overlap it.
  uint32_t from = 0, id = 0;
  while (other.NextAtLeast(from, &id)) {
    uint32_t db = other.DbOf(id);
    uint32_t a = Id(db, other.FirstHash(id));
    uint32_t b = Id(db, other.LastHash(id));
    roaring_bitmap_add_range(bm_, a, uint64_t{b} + 1);
    if (id == UINT32_MAX) break;
    from = id + 1;
  }
}

uint64_t RangeSet::Cardinality() const { return roaring_bitmap_get_cardinality(bm_); }

bool RangeSet::empty() const { return roaring_bitmap_is_empty(bm_); }

size_t RangeSet::MemoryBytes() const { return roaring_bitmap_portable_size_in_bytes(bm_); }

void RangeSet::Clear() { roaring_bitmap_clear(bm_); }

void RangeSet::Encode(std::string* out) const {
  PutVarint(out, bits_);
  size_t n = roaring_bitmap_portable_size_in_bytes(bm_);
  size_t at = out->size();
  out->resize(at + n);
  roaring_bitmap_portable_serialize(bm_, out->data() + at);
}

bool RangeSet::Decode(std::string_view in, RangeSet* out, std::string* error) {
  size_t pos = 0;
  uint64_t bits = 0;
  if (!GetVarint(in, &pos, &bits) || bits < kMinRangeBits || bits > kMaxRangeBits) {
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
  out->bits_ = static_cast<uint32_t>(bits);
  return true;
}

}  // namespace strata
