#include "tools/strata-mem/rate_limit.h"

#include <gtest/gtest.h>

#include "tools/strata-mem/seen_set.h"

namespace strata::mem {
namespace {

TEST(TokenBucketTest, Unlimited) {
  TokenBucket b(0, 0, 0);
  EXPECT_TRUE(b.unlimited());
  EXPECT_EQ(b.Take(1e9, 0), 0);
}

TEST(TokenBucketTest, StartsEmptyThenRefillsUpToTheBurst) {
  TokenBucket b(1000, 100, 0.0);  // 1000 keys/s, burst 100
  // Empty at the start: 50 keys need 50 ms.
  EXPECT_DOUBLE_EQ(b.Take(50, 0.0), 0.05);
  // After sleeping those 50 ms the debt is repaid; the next 100 keys need 100 ms.
  EXPECT_DOUBLE_EQ(b.Take(100, 0.05), 0.1);
  // A long pause refills only up to the burst.
  EXPECT_EQ(b.Take(100, 10.0), 0);
  EXPECT_GT(b.Take(1, 10.0), 0);
}

TEST(TokenBucketTest, RateHoldsOverManyBatches) {
  // Simulated clock: the caller sleeps exactly what Take asks, then sends the batch.
  TokenBucket b(5000, 0, 0.0);  // default burst: 500
  double now = 0;
  double keys = 0;
  for (int i = 0; i < 200; i++) {
    now += b.Take(1000, now);  // batches bigger than the burst still go through
    keys += 1000;
    // Counted from the start, never faster than the rate.
    ASSERT_LE(keys / 5000, now + 1e-9);
  }
  EXPECT_NEAR(now, keys / 5000, 1e-9);
}

TEST(SeenSetTest, InsertsOnce) {
  SeenSet s;
  EXPECT_TRUE(s.Insert("a"));
  EXPECT_FALSE(s.Insert("a"));
  EXPECT_TRUE(s.Insert(""));
  EXPECT_FALSE(s.Insert(""));
  for (int i = 0; i < 100000; i++) ASSERT_TRUE(s.Insert("key:" + std::to_string(i)));
  for (int i = 0; i < 100000; i += 7) ASSERT_FALSE(s.Insert("key:" + std::to_string(i)));
  EXPECT_EQ(s.size(), 100002u);
}

}  // namespace
}  // namespace strata::mem
