// SlotIndex: which keys of one shard's database 0 lie in each Redis Cluster hash slot
// (docs/ARCHITECTURE.md "Cluster"), for CLUSTER COUNTKEYSINSLOT and GETKEYSINSLOT and for
// moving a slot's keys to another node.
//
// Design
//   A key's shard is picked by xxh3 of its hash tag and its slot by CRC16 of the same tag,
//   so one slot's keys are spread over every shard, and inside a shard's table they are
//   spread over all of hash space. Walking the table to find one slot's keys would cost
//   the whole shard per call. The index keeps, per slot, the table hashes
//   (core/hash.h TableHash) of the slot's keys in this shard: an open-addressing multiset
//   of 64-bit values, linear probing with backward-shift deletion, grown at 3/4 load and
//   shrunk below 1/8. A slot's keys are then found by looking each hash up in the table
//   (Table::ForEachWithHash), which touches only the entries sharing the hash's tag.
//   - Counting is O(1) (the set's size); listing n keys is O(n) lookups.
//   - Cost: 8 bytes per key over about 0.56 average load (~14 bytes per key), plus
//     16 bytes of header per slot (256 KiB per shard), allocated only when cluster mode
//     is on. Nothing is stored per key in the entry or the table.
//   - Two keys of one slot may have the same 64-bit hash: the multiset holds the hash
//     twice, a delete removes one copy, and ForEachHash gives each distinct value once.
//   - Hash 0 marks an empty cell, so keys whose hash is 0 are only counted, per slot, in
//     a small side list, and listed like any other hash.
//
// Only database 0 is indexed: in cluster mode SELECT, MOVE, SWAPDB and COPY ... DB are
// refused, as in Redis Cluster, so no other database can gain a key through a command.
//
// Thread-safety: one owning thread (the shard's); no synchronisation inside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/key_slot.h"

namespace strata {

class SlotIndex {
 public:
  SlotIndex();
  ~SlotIndex();
  SlotIndex(const SlotIndex&) = delete;
  SlotIndex& operator=(const SlotIndex&) = delete;

  // A key of this slot with this table hash was created / deleted.
  void Add(uint32_t slot, uint64_t hash);
  void Remove(uint32_t slot, uint64_t hash);

  // How many keys of the slot this shard holds.
  uint32_t Count(uint32_t slot) const;
  // Every key count, summed.
  size_t total() const { return total_; }

  // Calls fn(hash) once for each distinct hash of the slot, until fn returns false.
  template <class F>
  void ForEachHash(uint32_t slot, F&& fn) const;

  // Forgets every key.
  void Clear();

  // Bytes this index holds (headers and sets), as the allocator gives them.
  size_t Bytes() const { return bytes_; }

 private:
  struct Set {
    uint64_t* cells = nullptr;  // cap cells, 0 = empty; null when cap is 0
    uint32_t used = 0;
    uint32_t cap = 0;  // 0 or a power of two
  };
  static constexpr uint32_t kMinCap = 4;

  static uint32_t HomeOf(uint64_t hash, uint32_t cap) {
    return static_cast<uint32_t>(hash) & (cap - 1);
  }
  void Resize(Set& s, uint32_t cap);
  static void Place(uint64_t* cells, uint32_t cap, uint64_t hash);

  Set* sets_;  // kClusterSlots of them, from mimalloc (counted at its usable size)
  std::vector<uint32_t> zero_slots_;  // one element per key whose hash is 0
  size_t total_ = 0;
  size_t bytes_ = 0;
};

template <class F>
void SlotIndex::ForEachHash(uint32_t slot, F&& fn) const {
  for (uint32_t z : zero_slots_) {
    if (z == slot) {
      if (!fn(uint64_t{0})) return;
      break;
    }
  }
  const Set& s = sets_[slot];
  for (uint32_t i = 0; i < s.cap; i++) {
    uint64_t h = s.cells[i];
    if (h == 0) continue;
    // A repeated hash sits later in the same probe run as its first copy: skip it when
    // the run from its home to here already holds it.
    bool repeat = false;
    for (uint32_t j = HomeOf(h, s.cap); j != i; j = (j + 1) & (s.cap - 1)) {
      if (s.cells[j] == h) {
        repeat = true;
        break;
      }
    }
    if (!repeat && !fn(h)) return;
  }
}

}  // namespace strata
