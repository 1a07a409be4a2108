#include "server/engine/latency_histogram.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace strata::latency {
namespace {

TEST(LatencyHistogramTest, EveryTickCountFallsInsideItsBucket) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; i++) {
    uint64_t t = rng() >> (rng() % 64);
    size_t b = Bucket(t);
    ASSERT_LT(b, kBuckets);
    ASSERT_LE(t, BucketUpperTicks(b)) << t;
    if (b > 0) {
      ASSERT_GT(t, BucketUpperTicks(b - 1)) << t;
    }
  }
  EXPECT_EQ(Bucket(0), 0u);
  EXPECT_EQ(Bucket(7), 7u);
  EXPECT_EQ(Bucket(UINT64_MAX), kBuckets - 1);
  EXPECT_EQ(BucketUpperTicks(kBuckets - 1), UINT64_MAX);
}

TEST(LatencyHistogramTest, BucketsAreNarrow) {
  for (size_t b = 8; b + 1 < kBuckets; b++) {
    uint64_t lo = BucketUpperTicks(b - 1) + 1, hi = BucketUpperTicks(b);
    ASSERT_LE(static_cast<double>(hi - lo + 1), static_cast<double>(lo) / 8 + 1) << b;
  }
}

TEST(LatencyHistogramTest, PercentilesAndCumulativeCounts) {
  std::vector<uint64_t> h;
  // 1000 ticks per microsecond: 90 runs of 1 us, 9 of 10 us, 1 of 1000 us.
  auto add = [&](uint64_t ticks, int n) {
    if (h.empty()) h.assign(kBuckets, 0);
    h[Bucket(ticks)] += n;
  };
  add(1000, 90);
  add(10000, 9);
  add(1000000, 1);
  EXPECT_EQ(Total(h), 100u);
  double p50 = PercentileMicros(h, 50, 1000);
  EXPECT_GE(p50, 1.0);
  EXPECT_LE(p50, 1.0 * 1.125);
  double p99 = PercentileMicros(h, 99, 1000);
  EXPECT_GE(p99, 10.0);
  EXPECT_LE(p99, 10.0 * 1.125);
  double p999 = PercentileMicros(h, 99.9, 1000);
  EXPECT_GE(p999, 1000.0);
  EXPECT_LE(p999, 1000.0 * 1.125);
  auto cdf = CumulativeMicros(h, 1000);
  ASSERT_FALSE(cdf.empty());
  EXPECT_EQ(cdf.back().second, 100u);
  for (size_t i = 1; i < cdf.size(); i++) {
    EXPECT_GT(cdf[i].first, cdf[i - 1].first);
    EXPECT_GT(cdf[i].second, cdf[i - 1].second);
  }
  // Redis's labels: runs at or under 1024 ns (the 1 us ones: their bucket ends at 1023
  // ticks), labelled 1.
  EXPECT_EQ(cdf[0].first, 1u);
  EXPECT_EQ(cdf[0].second, 90u);
  std::vector<uint64_t> empty;
  EXPECT_EQ(PercentileMicros(empty, 50, 1000), 0);
  EXPECT_TRUE(CumulativeMicros(empty, 1000).empty());
  Merge(&empty, h);
  EXPECT_EQ(Total(empty), 100u);
}

TEST(LatencyHistogramTest, CumulativeLabelsAreRedisHdrStepsClampedAtOneSecond) {
  EXPECT_EQ(HighestEquivalentNs(1024) / 1000, 1u);
  EXPECT_EQ(HighestEquivalentNs(32768) / 1000, 33u);
  EXPECT_EQ(HighestEquivalentNs(65536) / 1000, 66u);
  EXPECT_EQ(HighestEquivalentNs(uint64_t{1} << 21) / 1000, 2113u);
  EXPECT_EQ(HighestEquivalentNs(uint64_t{1} << 29) / 1000, 541065u);
  EXPECT_EQ(HighestEquivalentNs(uint64_t{1} << 30) / 1000, 1073741u);
  std::vector<uint64_t> h(kBuckets, 0);
  // 1000 ticks per microsecond: a run of 20 us, one of 33 us and one of 5 s (beyond
  // Redis's 1 s clamp). A run counts at the first step whose edge covers its whole
  // bucket: 33 us lies in [32768, 36863] ns, past the 33 step's edge (33023 ns).
  h[Bucket(20000)] += 1;
  h[Bucket(33000)] += 1;
  h[Bucket(5000000000ull)] += 1;
  auto cdf = CumulativeMicros(h, 1000);
  ASSERT_EQ(cdf.size(), 3u);
  EXPECT_EQ(cdf[0], std::make_pair(uint64_t{33}, uint64_t{1}));
  EXPECT_EQ(cdf[1], std::make_pair(uint64_t{66}, uint64_t{2}));
  EXPECT_EQ(cdf[2], std::make_pair(uint64_t{1073741}, uint64_t{3}));
}

}  // namespace
}  // namespace strata::latency
