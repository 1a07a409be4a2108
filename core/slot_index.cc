#include "core/slot_index.h"

#include <mimalloc.h>

#include <algorithm>
#include <cassert>

namespace strata {

SlotIndex::SlotIndex()
    : sets_(static_cast<Set*>(mi_zalloc(sizeof(Set) * kClusterSlots))) {  // all empty
  bytes_ = mi_usable_size(sets_);
}

SlotIndex::~SlotIndex() {
  for (uint32_t i = 0; i < kClusterSlots; i++) mi_free(sets_[i].cells);
  mi_free(sets_);
}

void SlotIndex::Place(uint64_t* cells, uint32_t cap, uint64_t hash) {
  uint32_t i = HomeOf(hash, cap);
  while (cells[i] != 0) i = (i + 1) & (cap - 1);
  cells[i] = hash;
}

void SlotIndex::Resize(Set& s, uint32_t cap) {
  uint64_t* old = s.cells;
  uint32_t old_cap = s.cap;
  if (old != nullptr) bytes_ -= mi_usable_size(old);
  s.cells = nullptr;
  s.cap = cap;
  if (cap != 0) {
    s.cells = static_cast<uint64_t*>(mi_zalloc(sizeof(uint64_t) * cap));
    bytes_ += mi_usable_size(s.cells);
    for (uint32_t i = 0; i < old_cap; i++) {
      if (old[i] != 0) Place(s.cells, cap, old[i]);
    }
  }
  mi_free(old);
}

void SlotIndex::Add(uint32_t slot, uint64_t hash) {
  total_++;
  if (hash == 0) [[unlikely]] {
    zero_slots_.push_back(slot);
    return;
  }
  Set& s = sets_[slot];
  if ((s.used + 1) * 4 > s.cap * 3) Resize(s, s.cap == 0 ? kMinCap : s.cap * 2);
  Place(s.cells, s.cap, hash);
  s.used++;
}

void SlotIndex::Remove(uint32_t slot, uint64_t hash) {
  if (hash == 0) [[unlikely]] {
    auto it = std::find(zero_slots_.begin(), zero_slots_.end(), slot);
    assert(it != zero_slots_.end());
    if (it == zero_slots_.end()) return;
    *it = zero_slots_.back();
    zero_slots_.pop_back();
    total_--;
    return;
  }
  Set& s = sets_[slot];
  if (s.cap == 0) {
    assert(false && "SlotIndex::Remove of a hash not there");
    return;
  }
  uint32_t mask = s.cap - 1;
  uint32_t i = HomeOf(hash, s.cap);
  while (s.cells[i] != hash) {
    if (s.cells[i] == 0) {
      assert(false && "SlotIndex::Remove of a hash not there");
      return;
    }
    i = (i + 1) & mask;
  }
  // Backward shift: pull each later member of the run whose home does not lie in
  // (i, j] into the hole, so every member stays reachable from its home.
  uint32_t j = i;
  while (true) {
    j = (j + 1) & mask;
    uint64_t h = s.cells[j];
    if (h == 0) break;
    uint32_t home = HomeOf(h, s.cap);
    bool home_in_gap = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (home_in_gap) continue;
    s.cells[i] = h;
    i = j;
  }
  s.cells[i] = 0;
  s.used--;
  total_--;
  if (s.used == 0) {
    Resize(s, 0);
  } else if (s.cap > kMinCap && s.used * 8 < s.cap) {
    Resize(s, s.cap / 2);
  }
}

uint32_t SlotIndex::Count(uint32_t slot) const {
  uint32_t n = sets_[slot].used;
  for (uint32_t z : zero_slots_) n += z == slot;
  return n;
}

void SlotIndex::Clear() {
  for (uint32_t i = 0; i < kClusterSlots; i++) {
    if (sets_[i].cap != 0) Resize(sets_[i], 0);
    sets_[i].used = 0;
  }
  zero_slots_.clear();
  zero_slots_.shrink_to_fit();
  total_ = 0;
}

}  // namespace strata
