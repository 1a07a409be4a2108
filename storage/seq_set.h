// SeqSet: a compressed set of 64-bit sequence numbers (CRoaring bitmaps, one per
// 2^32-wide chunk), for the spill store's dead records (storage/cold_store.h).
//
// Runs of consecutive numbers and dense regions cost a few bits per number; a sparse
// region costs about 2 bytes per number. Every operation is O(log chunks) plus the
// containers it touches; RangeCount is O(chunks) (rank).
//
// Thread-safety: none; the owner locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

typedef struct roaring_bitmap_s roaring_bitmap_t;

namespace strata {

class SeqSet {
 public:
  SeqSet() = default;
  ~SeqSet();
  SeqSet(const SeqSet&) = delete;
  SeqSet& operator=(const SeqSet&) = delete;
  SeqSet(SeqSet&& o) noexcept;
  SeqSet& operator=(SeqSet&& o) noexcept;

  // Adds seq; true if it was not there.
  bool Add(uint64_t seq);
  // Removes seq; true if it was there.
  bool Remove(uint64_t seq);
  bool Contains(uint64_t seq) const;
  // Adds, or removes, every number in [first, last] (inclusive).
  void AddRange(uint64_t first, uint64_t last);
  void RemoveRange(uint64_t first, uint64_t last);
  // How many numbers of the set lie in [first, last].
  uint64_t RangeCount(uint64_t first, uint64_t last) const;
  // Adds every number of o (o is unchanged).
  void AddAll(const SeqSet& o);
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // About the bytes the bitmaps take (their serialized size plus each chunk's map node),
  // after compacting runs.
  size_t MemoryBytes();

 private:
  roaring_bitmap_t* Chunk(uint32_t high);  // created if missing
  void DropIfEmpty(uint32_t high);
  std::map<uint32_t, roaring_bitmap_t*> chunks_;
  uint64_t size_ = 0;
};

}  // namespace strata
