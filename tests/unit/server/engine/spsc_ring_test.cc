#include "server/engine/spsc_ring.h"

#include <gtest/gtest.h>

#include <thread>

namespace strata {
namespace {

TEST(SpscRingTest, FullAndEmpty) {
  SpscRing<int> r(4);
  int v = 0;
  EXPECT_FALSE(r.Pop(&v));
  for (int i = 0; i < 4; i++) EXPECT_TRUE(r.Push(i));
  EXPECT_FALSE(r.Push(99));
  EXPECT_TRUE(r.Pop(&v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(r.Push(4));
}

TEST(SpscRingTest, TwoThreadsKeepOrder) {
  SpscRing<uint64_t> r(64);
  constexpr uint64_t kN = 200000;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kN;) {
      if (r.Push(i)) i++;
    }
  });
  uint64_t expect = 0;
  while (expect < kN) {
    uint64_t v;
    if (r.Pop(&v)) {
      ASSERT_EQ(v, expect);
      expect++;
    }
  }
  producer.join();
}

}  // namespace
}  // namespace strata
