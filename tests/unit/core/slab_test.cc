#include "core/slab.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace strata {
namespace {

TEST(SlabTest, SlotSizesAreFine) {
  EXPECT_EQ(SlabHeap::SlotSize(1), 8u);
  EXPECT_EQ(SlabHeap::SlotSize(8), 8u);
  EXPECT_EQ(SlabHeap::SlotSize(9), 12u);
  EXPECT_EQ(SlabHeap::SlotSize(105), 108u);
  EXPECT_EQ(SlabHeap::SlotSize(256), 256u);
  EXPECT_EQ(SlabHeap::SlotSize(257), 264u);
  EXPECT_EQ(SlabHeap::SlotSize(512), 512u);
  EXPECT_EQ(SlabHeap::SlotSize(513), 528u);
  EXPECT_EQ(SlabHeap::SlotSize(1024), 1024u);
  EXPECT_EQ(SlabHeap::SlotSize(1025), 1056u);
  EXPECT_EQ(SlabHeap::SlotSize(2048), 2048u);
  for (size_t n = 1; n <= SlabHeap::kMaxSlotSize; n++) {
    size_t s = SlabHeap::SlotSize(n);
    ASSERT_GE(s, n);
    ASSERT_LE(s - n, n < 8 ? 7u : n < 256 ? 3u : n / 32 + 1) << n;
    ASSERT_EQ(s % 4, 0u);
  }
}

TEST(SlabTest, AllocateFreeAndReturnPages) {
  SlabHeap heap;
  std::vector<void*> blocks;
  for (int i = 0; i < 20000; i++) {
    void* p = heap.Allocate(100);
    std::memset(p, i & 0xff, 100);
    blocks.push_back(p);
  }
  EXPECT_EQ(heap.slot_bytes(), 20000u * 100);
  EXPECT_EQ(SlabHeap::UsableSize(blocks[0]), 100u);
  size_t pages = heap.pages();
  EXPECT_GE(pages * (SlabHeap::kPageSize - 64) / 100, 20000u);
  EXPECT_LE(pages, 20000u * 100 / (SlabHeap::kPageSize - 64) + 1);
  // Contents are intact: no two blocks overlap.
  for (int i = 0; i < 20000; i++) {
    ASSERT_EQ(static_cast<unsigned char*>(blocks[i])[99], i & 0xff);
  }
  for (void* p : blocks) EXPECT_EQ(heap.Free(p), 100u);
  EXPECT_EQ(heap.slot_bytes(), 0u);
  EXPECT_EQ(heap.pages(), 1u);  // one page kept for the class
}

TEST(SlabTest, RandomMixReusesSlots) {
  SlabHeap heap;
  std::mt19937 rng(3);
  std::vector<std::pair<void*, size_t>> live;
  size_t expect = 0;
  for (int op = 0; op < 100000; op++) {
    if (!live.empty() && rng() % 2 == 0) {
      size_t i = rng() % live.size();
      expect -= heap.Free(live[i].first);
      live[i] = live.back();
      live.pop_back();
    } else {
      size_t n = 1 + rng() % SlabHeap::kMaxSlotSize;
      void* p = heap.Allocate(n);
      std::memset(p, 0xab, n);
      live.push_back({p, n});
      expect += SlabHeap::SlotSize(n);
    }
  }
  EXPECT_EQ(heap.slot_bytes(), expect);
  EXPECT_GE(heap.page_bytes(), expect);
  EXPECT_FALSE(heap.Stats().empty());
  for (auto& [p, n] : live) heap.Free(p);
  EXPECT_EQ(heap.slot_bytes(), 0u);
}

}  // namespace
}  // namespace strata
