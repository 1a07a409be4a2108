// KeyLockMap: a map from 64-bit lock keys to small values, for LockTable's locks (one
// entry per locked or waited-for key).
//
// A multi-shard command takes and drops one entry per key on each of its shards, so the
// map sees an insert and an erase per key per command. std::unordered_map spent a node
// allocation, a modulo and a pointer chase on each. This is open addressing with linear
// probing over a power-of-two array of slots: a lookup is a multiply-shift and a scan of
// neighbouring slots; an insert writes a slot; an erase shifts the entries after it back
// into place (no tombstones, so lookups stay short however many erases there were). The
// table doubles past 1/2 full and halves below 1/8 once it is big (kShrinkAboveSlots),
// so a burst of locks (an MSET of 100k keys) gives its memory back once released.
//
// Pointers to values stay valid until the next insert or erase; find() and operator[]
// are the whole interface besides iteration (ForEach) and erase.
// Thread-safety: none; LockTable's shard thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata {

template <class V>
class KeyLockMap {
 public:
  // The table never shrinks below kMinSlots, nor at all while it has at most
  // kShrinkAboveSlots: a command's locks come and go as a burst, and a table that grew
  // and shrank with each burst would rehash every time.
  static constexpr size_t kMinSlots = 256;
  static constexpr size_t kShrinkAboveSlots = 4096;

  KeyLockMap() : slots_(kMinSlots) {}

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

  // The value of key, or null.
  V* find(uint64_t key) {
    size_t i = Home(key);
    while (slots_[i].used) {
      if (slots_[i].key == key) return &slots_[i].value;
      i = (i + 1) & mask();
    }
    return nullptr;
  }
  const V* find(uint64_t key) const { return const_cast<KeyLockMap*>(this)->find(key); }

  // The value of key, inserted value-initialized when absent.
  V& operator[](uint64_t key) {
    if (V* v = find(key)) return *v;
    if (2 * (size_ + 1) > slots_.size()) Rehash(slots_.size() * 2);
    size_t i = Home(key);
    while (slots_[i].used) i = (i + 1) & mask();
    slots_[i].used = true;
    slots_[i].key = key;
    slots_[i].value = V{};
    size_++;
    return slots_[i].value;
  }

  // Removes key if present.
  void erase(uint64_t key) {
    size_t i = Home(key);
    while (slots_[i].used && slots_[i].key != key) i = (i + 1) & mask();
    if (!slots_[i].used) return;
    // Backward shift: each entry after the hole that may sit in it (its home is not
    // cyclically within (hole, its slot]) moves into it, until an empty slot.
    size_t hole = i;
    size_t j = i;
    while (true) {
      j = (j + 1) & mask();
      if (!slots_[j].used) break;
      size_t home = Home(slots_[j].key);
      bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole].used = false;
    size_--;
    if (slots_.size() > kShrinkAboveSlots && 8 * size_ < slots_.size()) Rehash(slots_.size() / 2);
  }

  // fn(key, value) for every entry, in no particular order; fn must not insert or erase.
  template <class Fn>
  void ForEach(Fn&& fn) const {
    for (const Slot& s : slots_) {
      if (s.used) fn(s.key, s.value);
    }
  }
  // True when pred(key, value) holds for some entry.
  template <class Pred>
  bool Any(Pred&& pred) const {
    for (const Slot& s : slots_) {
      if (s.used && pred(s.key, s.value)) return true;
    }
    return false;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    V value{};
    bool used = false;
  };
  size_t mask() const { return slots_.size() - 1; }
  // Keys are hashes already (LockTable::LockKey), but the high bits of a multiply spread
  // any pattern in them.
  size_t Home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask();
  }
  void Rehash(size_t n) {
    std::vector<Slot> old(n);
    old.swap(slots_);
    for (const Slot& s : old) {
      if (!s.used) continue;
      size_t i = Home(s.key);
      while (slots_[i].used) i = (i + 1) & mask();
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace strata
