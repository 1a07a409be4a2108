#include "core/slab.h"

#include <sys/mman.h>

#include <cassert>
#include <cstdio>
#include <new>

namespace strata {

struct SlabHeap::Page {
  uint32_t cls;
  uint32_t live;
  uint32_t bump;  // offset of the first never-used slot
  uint32_t end;   // offset past the last whole slot
  void* free;     // singly-linked free slots (the link is the slot's first 8 bytes)
  Page* prev;
  Page* next;
};

namespace {

constexpr size_t kHeaderSize = 64;
static_assert(sizeof(void*) == 8);

}  // namespace

SlabHeap::Page* SlabHeap::PageOf(const void* p) {
  return reinterpret_cast<Page*>(reinterpret_cast<uintptr_t>(p) & ~(uintptr_t{kPageSize} - 1));
}

uint32_t SlabHeap::ClassIndex(size_t n) {
  if (n <= kMinSlotSize) return 0;
  if (n <= 256) return static_cast<uint32_t>((n - 8 + 3) / 4);
  if (n <= 512) return static_cast<uint32_t>(63 + (n - 256 + 7) / 8 - 1);
  if (n <= 1024) return static_cast<uint32_t>(95 + (n - 512 + 15) / 16 - 1);
  return static_cast<uint32_t>(127 + (n - 1024 + 31) / 32 - 1);
}

namespace {

size_t ClassSize(uint32_t cls) {
  if (cls < 63) return 8 + cls * 4;
  if (cls < 95) return 256 + (cls - 62) * 8;
  if (cls < 127) return 512 + (cls - 94) * 16;
  return 1024 + (cls - 126) * 32;
}

}  // namespace

size_t SlabHeap::SlotSize(size_t n) { return ClassSize(ClassIndex(n)); }

SlabHeap::SlabHeap() {
  for (uint32_t i = 0; i < kClassCount; i++)
    classes_[i].slot_size = static_cast<uint32_t>(ClassSize(i));
}

SlabHeap::~SlabHeap() {
  for (Class& c : classes_) {
    for (Page** list : {&c.partial, &c.full}) {
      while (*list != nullptr) {
        Page* p = *list;
        Unlink(list, p);
        munmap(p, kPageSize);
      }
    }
  }
}

void SlabHeap::Unlink(Page** list, Page* p) {
  if (p->prev != nullptr) p->prev->next = p->next;
  if (p->next != nullptr) p->next->prev = p->prev;
  if (*list == p) *list = p->next;
  p->prev = p->next = nullptr;
}

void SlabHeap::PushFront(Page** list, Page* p) {
  p->prev = nullptr;
  p->next = *list;
  if (*list != nullptr) (*list)->prev = p;
  *list = p;
}

SlabHeap::Page* SlabHeap::NewPage(uint32_t cls) {
  // mmap twice the size and trim, so the page is aligned to its size.
  void* raw =
      mmap(nullptr, 2 * kPageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  uintptr_t base = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (base + kPageSize - 1) & ~(uintptr_t{kPageSize} - 1);
  if (aligned > base) munmap(raw, aligned - base);
  uintptr_t tail = aligned + kPageSize;
  uintptr_t raw_end = base + 2 * kPageSize;
  if (raw_end > tail) munmap(reinterpret_cast<void*>(tail), raw_end - tail);
  Page* p = reinterpret_cast<Page*>(aligned);
  size_t slot = classes_[cls].slot_size;
  p->cls = cls;
  p->live = 0;
  p->bump = kHeaderSize;
  p->end = static_cast<uint32_t>(kHeaderSize + (kPageSize - kHeaderSize) / slot * slot);
  p->free = nullptr;
  p->prev = p->next = nullptr;
  pages_++;
  classes_[cls].pages++;
  return p;
}

void SlabHeap::ReleasePage(Page* p) {
  Class& c = classes_[p->cls];
  Unlink(&c.partial, p);
  c.pages--;
  pages_--;
  munmap(p, kPageSize);
}

void* SlabHeap::Allocate(size_t n) {
  assert(n > 0 && n <= kMaxSlotSize);
  uint32_t cls = ClassIndex(n);
  Class& c = classes_[cls];
  Page* p = c.partial;
  if (p == nullptr) {
    p = NewPage(cls);
    PushFront(&c.partial, p);
  }
  void* slot;
  if (p->free != nullptr) {
    slot = p->free;
    void* next;
    __builtin_memcpy(&next, slot, sizeof(next));
    p->free = next;
  } else {
    slot = reinterpret_cast<char*>(p) + p->bump;
    p->bump += c.slot_size;
  }
  p->live++;
  c.live++;
  if (p->free == nullptr && p->bump >= p->end) {  // now full
    Unlink(&c.partial, p);
    PushFront(&c.full, p);
  }
  slot_bytes_ += c.slot_size;
  return slot;
}

size_t SlabHeap::UsableSize(const void* ptr) { return ClassSize(PageOf(ptr)->cls); }

size_t SlabHeap::Free(void* ptr) {
  Page* p = PageOf(ptr);
  Class& c = classes_[p->cls];
  bool was_full = p->free == nullptr && p->bump >= p->end;
  __builtin_memcpy(ptr, &p->free, sizeof(void*));
  p->free = ptr;
  p->live--;
  c.live--;
  slot_bytes_ -= c.slot_size;
  if (was_full) {
    Unlink(&c.full, p);
    PushFront(&c.partial, p);
  }
  if (p->live == 0 && c.pages > 1) ReleasePage(p);
  return c.slot_size;
}

std::string SlabHeap::Stats() const {
  std::string out;
  char line[160];
  std::snprintf(line, sizeof(line), "slab: pages=%zu page_bytes=%zu slot_bytes=%zu\n", pages_,
                page_bytes(), slot_bytes_);
  out += line;
  for (const Class& c : classes_) {
    if (c.pages == 0) continue;
    size_t per_page = (kPageSize - kHeaderSize) / c.slot_size;
    std::snprintf(line, sizeof(line), "  class %4u: pages=%zu live=%zu capacity=%zu fill=%.1f%%\n",
                  c.slot_size, c.pages, c.live, c.pages * per_page,
                  c.pages == 0 ? 0.0 : 100.0 * c.live / (c.pages * per_page));
    out += line;
  }
  return out;
}

}  // namespace strata
