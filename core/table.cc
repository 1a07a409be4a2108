#include "core/table.h"

#include <mimalloc.h>

#include <cassert>
#include <cstring>
#include <new>

#include "core/hash.h"

namespace strata {

Table::Segment* Table::NewSegment(uint32_t depth) {
  void* mem = mi_zalloc(sizeof(Segment));
  if (mem == nullptr) throw std::bad_alloc();
  Segment* s = static_cast<Segment*>(mem);
  s->depth = depth;
  s->count = 0;
  return s;
}

void Table::FreeSegment(Segment* s) { mi_free(s); }

Table::Table() {
  dir_.push_back(NewSegment(0));
  segments_ = 1;
}

Table::~Table() {
  Clear();
  FreeSegment(dir_[0]);
}

size_t Table::Clear() {
  size_t freed = 0;
  const Segment* prev = nullptr;
  std::vector<Segment*> unique;
  for (Segment* s : dir_) {
    if (s == prev) continue;
    prev = s;
    unique.push_back(s);
  }
  for (Segment* s : unique) {
    for (Entry* head : s->buckets) {
      Entry* e = head;
      while (e != nullptr) {
        Entry* next = e->next;
        freed += Entry::Destroy(e);
        e = next;
      }
    }
    FreeSegment(s);
  }
  dir_.assign(1, NewSegment(0));
  dir_.shrink_to_fit();
  global_depth_ = 0;
  segments_ = 1;
  size_ = 0;
  return freed;
}

size_t Table::OverheadBytes() const {
  return dir_.capacity() * sizeof(Segment*) + segments_ * mi_good_size(sizeof(Segment));
}

Entry* Table::Find(std::string_view key, uint64_t hash) const {
  const Segment* s = dir_[DirIndex(hash)];
  for (Entry* e = s->buckets[BucketIndex(s, hash)]; e != nullptr; e = e->next) {
    if (e->KeyLen() == key.size() && e->Key() == key) return e;
  }
  return nullptr;
}

Entry** Table::FindLink(std::string_view key, uint64_t hash) {
  Segment* s = dir_[DirIndex(hash)];
  Entry** link = &s->buckets[BucketIndex(s, hash)];
  while (*link != nullptr) {
    Entry* e = *link;
    if (e->KeyLen() == key.size() && e->Key() == key) return link;
    link = &e->next;
  }
  return nullptr;
}

void Table::Insert(Entry* e, uint64_t hash) {
  uint32_t di = DirIndex(hash);
  Segment* s = dir_[di];
  if (s->count >= kSegmentLoadMax && s->depth < kDepthMax) {
    Split(di);
    di = DirIndex(hash);
    s = dir_[di];
  }
  Entry** head = &s->buckets[BucketIndex(s, hash)];
  e->next = *head;
  *head = e;
  s->count++;
  size_++;
}

Entry* Table::ReplaceAt(Entry** link, Entry* e) {
  Entry* old = *link;
  e->next = old->next;
  *link = e;
  return old;
}

Entry* Table::UnlinkAt(Entry** link) {
  Entry* e = *link;
  *link = e->next;
  e->next = nullptr;
  uint64_t hash = TableHash(e->Key());
  dir_[DirIndex(hash)]->count--;
  size_--;
  return e;
}

void Table::Split(uint32_t dir_index) {
  Segment* old = dir_[dir_index];
  if (old->depth == global_depth_) {
    std::vector<Segment*> bigger(dir_.size() * 2);
    for (size_t i = 0; i < dir_.size(); i++) {
      bigger[2 * i] = dir_[i];
      bigger[2 * i + 1] = dir_[i];
    }
    dir_.swap(bigger);
    global_depth_++;
    dir_index *= 2;
  }
  uint32_t depth = old->depth + 1;
  Segment* halves[2] = {NewSegment(depth), NewSegment(depth)};
  for (Entry* head : old->buckets) {
    Entry* e = head;
    while (e != nullptr) {
      Entry* next = e->next;
      uint64_t hash = TableHash(e->Key());
      Segment* to = halves[(hash >> (63 - old->depth)) & 1];
      Entry** b = &to->buckets[BucketIndex(to, hash)];
      e->next = *b;
      *b = e;
      to->count++;
      e = next;
    }
  }
  // The old segment owned 2^(G-depth_old) consecutive directory slots.
  uint32_t span = 1u << (global_depth_ - old->depth);
  uint32_t first = dir_index & ~(span - 1);
  for (uint32_t i = 0; i < span; i++) dir_[first + i] = halves[i < span / 2 ? 0 : 1];
  FreeSegment(old);
  segments_++;
}

Entry* Table::RandomEntry(uint64_t seed) const {
  if (size_ == 0) return nullptr;
  uint64_t cursor = seed & (kCursorEnd - 1);
  // Walk buckets from a random position; the table is non-empty, so this ends.
  for (uint64_t steps = 0;; steps++) {
    uint32_t dir_index =
        global_depth_ == 0 ? 0 : static_cast<uint32_t>(cursor >> (kCursorBits - global_depth_));
    const Segment* s = dir_[dir_index];
    int shift = kCursorBits - static_cast<int>(s->depth) - kBucketBits;
    uint32_t bucket = static_cast<uint32_t>((cursor >> shift) & (kBuckets - 1));
    Entry* head = s->buckets[bucket];
    if (head != nullptr) {
      size_t n = 0;
      for (Entry* e = head; e != nullptr; e = e->next) n++;
      size_t pick = (seed >> 40) % n;
      Entry* e = head;
      while (pick--) e = e->next;
      return e;
    }
    uint64_t start = (cursor >> shift) << shift;
    cursor = start + (1ull << shift);
    if (cursor >= kCursorEnd) cursor = 0;
  }
}

}  // namespace strata
