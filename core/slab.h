// SlabHeap: one shard's allocator for entries, with size classes fine enough that
// rounding costs a few bytes per key instead of mimalloc's up-to-25% bins.
//
// Design
//   Sizes up to kMaxSlotSize are served from size classes spaced 4 bytes apart up to 256,
//   8 up to 512, 16 up to 1024 and 32 up to 2048 (so rounding wastes at most 3 bytes for
//   a 100-byte value, and at most ~3% above 256). Each class owns 64 KiB pages, aligned
//   to their size, so a slot's page is found by masking its address. A page starts with
//   a header (class, live count, free list, bump offset, list links); slots are carved
//   lazily by a bump offset, so memory never handed out is never touched (and never
//   counted in RSS). Freed slots go on the page's own free list. A class keeps a
//   doubly-linked list of pages that have free slots; a page whose last slot is freed
//   goes back to the OS (munmap) unless it is the class's only page, so a shrinking
//   dataset returns memory by whole pages. Larger sizes go straight to mimalloc.
//
// Accounting
//   slot_bytes() is the sum of slot sizes handed out (the "usable size" of every slab
//   allocation); page_bytes() is what the pages hold from the OS. The difference is
//   slack: free slots inside live pages, reported as allocator fragmentation.
//
// Thread-safety: one heap per shard; only the owning thread may call it. Memory from a
// heap must be freed to the same heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace strata {

class SlabHeap {
 public:
  static constexpr size_t kPageSize = 64 * 1024;
  static constexpr size_t kMaxSlotSize = 2048;
  static constexpr size_t kMinSlotSize = 8;

  SlabHeap();
  ~SlabHeap();  // returns every page to the OS
  SlabHeap(const SlabHeap&) = delete;
  SlabHeap& operator=(const SlabHeap&) = delete;

  // The slot size that a request of n bytes (1..kMaxSlotSize) is rounded up to.
  static size_t SlotSize(size_t n);

  // REQUIRES: 0 < n <= kMaxSlotSize. Throws std::bad_alloc when the OS refuses a page.
  void* Allocate(size_t n);
  // REQUIRES: p came from Allocate of this heap. Returns the slot size freed.
  size_t Free(void* p);
  // The slot size of a live allocation.
  static size_t UsableSize(const void* p);

  size_t slot_bytes() const { return slot_bytes_; }
  size_t page_bytes() const { return pages_ * kPageSize; }
  size_t pages() const { return pages_; }
  // Per-class occupancy, one line per class in use (MEMORY MALLOC-STATS).
  std::string Stats() const;

 private:
  struct Page;
  struct Class {
    uint32_t slot_size = 0;
    Page* partial = nullptr;  // pages with at least one free slot
    Page* full = nullptr;     // pages without one
    size_t pages = 0;
    size_t live = 0;
  };
  static uint32_t ClassIndex(size_t n);
  Page* NewPage(uint32_t cls);
  void ReleasePage(Page* p);
  static Page* PageOf(const void* p);
  static void Unlink(Page** list, Page* p);
  static void PushFront(Page** list, Page* p);

  static constexpr uint32_t kClassCount = 63 + 32 + 32 + 32;
  Class classes_[kClassCount];
  size_t slot_bytes_ = 0;
  size_t pages_ = 0;
};

}  // namespace strata
