#include "storage/seq_set.h"

#include <roaring/roaring.h>

#include <utility>

namespace strata {

namespace {
constexpr uint32_t High(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
constexpr uint32_t Low(uint64_t v) { return static_cast<uint32_t>(v); }
constexpr size_t kChunkOverheadBytes = 64;  // a std::map node and the bitmap header
}  // namespace

SeqSet::~SeqSet() {
  for (auto& [h, bm] : chunks_) roaring_bitmap_free(bm);
}

SeqSet::SeqSet(SeqSet&& o) noexcept : chunks_(std::move(o.chunks_)), size_(o.size_) {
  o.chunks_.clear();
  o.size_ = 0;
}

SeqSet& SeqSet::operator=(SeqSet&& o) noexcept {
  if (this != &o) {
    for (auto& [h, bm] : chunks_) roaring_bitmap_free(bm);
    chunks_ = std::move(o.chunks_);
    size_ = o.size_;
    o.chunks_.clear();
    o.size_ = 0;
  }
  return *this;
}

roaring_bitmap_t* SeqSet::Chunk(uint32_t high) {
  auto [it, inserted] = chunks_.try_emplace(high, nullptr);
  if (inserted) it->second = roaring_bitmap_create();
  return it->second;
}

void SeqSet::DropIfEmpty(uint32_t high) {
  auto it = chunks_.find(high);
  if (it != chunks_.end() && roaring_bitmap_is_empty(it->second)) {
    roaring_bitmap_free(it->second);
    chunks_.erase(it);
  }
}

bool SeqSet::Add(uint64_t seq) {
  roaring_bitmap_t* bm = Chunk(High(seq));
  if (roaring_bitmap_contains(bm, Low(seq))) return false;
  roaring_bitmap_add(bm, Low(seq));
  size_++;
  return true;
}

bool SeqSet::Remove(uint64_t seq) {
  auto it = chunks_.find(High(seq));
  if (it == chunks_.end() || !roaring_bitmap_contains(it->second, Low(seq))) return false;
  roaring_bitmap_remove(it->second, Low(seq));
  size_--;
  DropIfEmpty(High(seq));
  return true;
}

bool SeqSet::Contains(uint64_t seq) const {
  auto it = chunks_.find(High(seq));
  return it != chunks_.end() && roaring_bitmap_contains(it->second, Low(seq));
}

void SeqSet::AddRange(uint64_t first, uint64_t last) {
  if (first > last) return;
  for (uint64_t h = High(first); h <= High(last); h++) {
    uint32_t lo = h == High(first) ? Low(first) : 0;
    uint32_t hi = h == High(last) ? Low(last) : UINT32_MAX;
    roaring_bitmap_t* bm = Chunk(static_cast<uint32_t>(h));
    uint64_t before = roaring_bitmap_get_cardinality(bm);
    roaring_bitmap_add_range_closed(bm, lo, hi);
    size_ += roaring_bitmap_get_cardinality(bm) - before;
  }
}

void SeqSet::RemoveRange(uint64_t first, uint64_t last) {
  if (first > last) return;
  auto it = chunks_.lower_bound(High(first));
  while (it != chunks_.end() && it->first <= High(last)) {
    uint32_t h = it->first;
    uint32_t lo = h == High(first) ? Low(first) : 0;
    uint32_t hi = h == High(last) ? Low(last) : UINT32_MAX;
    uint64_t before = roaring_bitmap_get_cardinality(it->second);
    roaring_bitmap_remove_range_closed(it->second, lo, hi);
    size_ -= before - roaring_bitmap_get_cardinality(it->second);
    ++it;
    DropIfEmpty(h);
  }
}

uint64_t SeqSet::RangeCount(uint64_t first, uint64_t last) const {
  if (first > last) return 0;
  uint64_t n = 0;
  for (auto it = chunks_.lower_bound(High(first)); it != chunks_.end() && it->first <= High(last);
       ++it) {
    uint32_t h = it->first;
    uint64_t upto = h == High(last) ? roaring_bitmap_rank(it->second, Low(last))
                                    : roaring_bitmap_get_cardinality(it->second);
    uint64_t below =
        h == High(first) && Low(first) > 0 ? roaring_bitmap_rank(it->second, Low(first) - 1) : 0;
    n += upto - below;
  }
  return n;
}

void SeqSet::AddAll(const SeqSet& o) {
  for (const auto& [h, bm] : o.chunks_) {
    roaring_bitmap_t* mine = Chunk(h);
    uint64_t before = roaring_bitmap_get_cardinality(mine);
    roaring_bitmap_or_inplace(mine, bm);
    size_ += roaring_bitmap_get_cardinality(mine) - before;
  }
}

size_t SeqSet::MemoryBytes() {
  size_t n = 0;
  for (auto& [h, bm] : chunks_) {
    roaring_bitmap_run_optimize(bm);
    n += roaring_bitmap_size_in_bytes(bm) + kChunkOverheadBytes;
  }
  return n;
}

}  // namespace strata
