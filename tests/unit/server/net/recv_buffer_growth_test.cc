// RecvBufferGrowth: the provided receive buffers an io_uring loop keeps in its ring.
#include "server/net/recv_buffer_growth.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(RecvBufferGrowthTest, StartsAtItsInitialCount) {
  RecvBufferGrowth g(16, 128);
  EXPECT_EQ(g.count(), 16u);
  EXPECT_EQ(g.max(), 128u);
}

TEST(RecvBufferGrowthTest, ALightPassLeavesItAlone) {
  RecvBufferGrowth g(16, 128);
  for (unsigned used = 0; used < 12; used++) EXPECT_EQ(g.AfterPass(used, false), 16u);
}

TEST(RecvBufferGrowthTest, APassThatTookThreeQuartersDoubles) {
  RecvBufferGrowth g(16, 128);
  EXPECT_EQ(g.AfterPass(12, false), 32u);
  EXPECT_EQ(g.AfterPass(23, false), 32u);
  EXPECT_EQ(g.AfterPass(24, false), 64u);
}

TEST(RecvBufferGrowthTest, RunningOutDoublesWhateverTheCount) {
  RecvBufferGrowth g(16, 128);
  EXPECT_EQ(g.AfterPass(0, true), 32u);
  EXPECT_EQ(g.AfterPass(1, true), 64u);
}

TEST(RecvBufferGrowthTest, NeverPastTheMaximumNorBelowWhatItHas) {
  RecvBufferGrowth g(16, 48);
  EXPECT_EQ(g.AfterPass(16, true), 32u);
  EXPECT_EQ(g.AfterPass(32, true), 48u);
  EXPECT_EQ(g.AfterPass(48, true), 48u);
  EXPECT_EQ(g.AfterPass(0, false), 48u);
}

TEST(RecvBufferGrowthTest, OddArgumentsAreClamped) {
  EXPECT_EQ(RecvBufferGrowth(0, 128).count(), 1u);
  EXPECT_EQ(RecvBufferGrowth(300, 128).count(), 128u);
  RecvBufferGrowth g(4, 0);
  EXPECT_EQ(g.count(), 1u);
  EXPECT_EQ(g.AfterPass(1, true), 1u);
}

}  // namespace
}  // namespace strata
