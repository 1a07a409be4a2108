#include "tools/strata-bench/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace strata::bench {
namespace {

// The exact value at the rank LatencyHistogram uses: ceil(p / 100 * n), at least 1.
uint64_t ExactPercentile(const std::vector<uint64_t>& sorted, double p) {
  if (p <= 0) return sorted.front();
  if (p >= 100) return sorted.back();
  uint64_t rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp<uint64_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void ExpectPercentilesMatch(const std::vector<uint64_t>& values) {
  LatencyHistogram h;
  for (uint64_t v : values) h.Record(v);
  std::vector<uint64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double p : {0.0, 0.1, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0}) {
    const uint64_t exact = ExactPercentile(sorted, p);
    const uint64_t got = h.ValueAtPercentile(p);
    // Reported as the highest equivalent value: never below, within 0.1% above.
    EXPECT_GE(got, exact) << "p" << p;
    EXPECT_LE(static_cast<double>(got - exact), 0.001 * static_cast<double>(exact)) << "p" << p;
  }
}

TEST(LatencyHistogramTest, EmptyReportsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Min(), 0u);
  EXPECT_EQ(h.Max(), 0u);
  EXPECT_EQ(h.Mean(), 0.0);
  EXPECT_EQ(h.ValueAtPercentile(0), 0u);
  EXPECT_EQ(h.ValueAtPercentile(50), 0u);
  EXPECT_EQ(h.ValueAtPercentile(100), 0u);
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 2000; ++v) h.Record(v);
  EXPECT_EQ(h.ValueAtPercentile(50), 1000u);
  EXPECT_EQ(h.ValueAtPercentile(25), 500u);
  EXPECT_EQ(h.ValueAtPercentile(0), 1u);
  EXPECT_EQ(h.ValueAtPercentile(100), 2000u);
}

TEST(LatencyHistogramTest, P0IsMinAndP100IsMax) {
  LatencyHistogram h;
  h.Record(123457);
  h.Record(7);
  h.Record(59'999'999);
  EXPECT_EQ(h.ValueAtPercentile(0), 7u);
  EXPECT_EQ(h.Min(), 7u);
  EXPECT_EQ(h.ValueAtPercentile(100), 59'999'999u);
  EXPECT_EQ(h.Max(), 59'999'999u);
  // A single value is reported exactly at every percentile.
  LatencyHistogram one;
  one.Record(1'234'567);
  for (double p : {0.0, 1.0, 50.0, 99.9, 100.0}) EXPECT_EQ(one.ValueAtPercentile(p), 1'234'567u);
}

TEST(LatencyHistogramTest, UniformMatchesSortedReference) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<uint64_t> dist(1, 10'000'000);
  std::vector<uint64_t> values(200'000);
  for (auto& v : values) v = dist(rng);
  ExpectPercentilesMatch(values);
}

TEST(LatencyHistogramTest, LongTailMatchesSortedReference) {
  // Log-normal around ~200 us with a tail reaching seconds.
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(5.3, 1.5);
  std::vector<uint64_t> values(200'000);
  for (auto& v : values) {
    v = std::clamp<uint64_t>(static_cast<uint64_t>(dist(rng)), 1, LatencyHistogram::kMaxValue);
  }
  ExpectPercentilesMatch(values);
}

TEST(LatencyHistogramTest, MeanIsExact) {
  LatencyHistogram h;
  uint64_t sum = 0;
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<uint64_t> dist(1, 5'000'000);
  for (int i = 0; i < 10'001; ++i) {
    const uint64_t v = dist(rng);
    h.Record(v);
    sum += v;
  }
  h.RecordN(333, 4);
  sum += 333 * 4;
  EXPECT_EQ(h.Count(), 10'005u);
  EXPECT_DOUBLE_EQ(h.Mean(), static_cast<double>(sum) / 10'005);
}

TEST(LatencyHistogramTest, LargeValuesAreClampedAndCounted) {
  LatencyHistogram h;
  h.Record(10);
  h.Record(LatencyHistogram::kMaxValue + 1);
  h.RecordN(UINT64_MAX, 2);
  EXPECT_EQ(h.Count(), 4u);
  EXPECT_EQ(h.Max(), LatencyHistogram::kMaxValue);
  EXPECT_EQ(h.ValueAtPercentile(100), LatencyHistogram::kMaxValue);
  EXPECT_EQ(h.ValueAtPercentile(50), LatencyHistogram::kMaxValue);
  EXPECT_DOUBLE_EQ(h.Mean(), (10.0 + 3.0 * LatencyHistogram::kMaxValue) / 4);
}

TEST(LatencyHistogramTest, RecordNZeroIsANoOp) {
  LatencyHistogram h;
  h.RecordN(100, 0);
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Max(), 0u);
}

TEST(LatencyHistogramTest, MergeEqualsRecordingBoth) {
  LatencyHistogram a, b, both;
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> dist(6, 2);
  for (int i = 0; i < 50'000; ++i) {
    const uint64_t v = static_cast<uint64_t>(dist(rng)) + 1;
    (i % 3 == 0 ? a : b).Record(v);
    both.Record(v);
  }
  LatencyHistogram empty;
  a.Merge(b);
  a.Merge(empty);
  EXPECT_EQ(a.Count(), both.Count());
  EXPECT_EQ(a.Min(), both.Min());
  EXPECT_EQ(a.Max(), both.Max());
  EXPECT_DOUBLE_EQ(a.Mean(), both.Mean());
  for (double p = 0; p <= 100; p += 0.5) {
    EXPECT_EQ(a.ValueAtPercentile(p), both.ValueAtPercentile(p)) << "p" << p;
  }
  // Merging into an empty histogram copies it.
  empty.Merge(both);
  EXPECT_EQ(empty.Min(), both.Min());
  EXPECT_EQ(empty.ValueAtPercentile(99.9), both.ValueAtPercentile(99.9));
}

TEST(LatencyHistogramTest, ResetEmpties) {
  LatencyHistogram h;
  h.Record(500);
  h.Record(9000);
  h.Reset();
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.ValueAtPercentile(50), 0u);
  h.Record(42);
  EXPECT_EQ(h.Min(), 42u);
  EXPECT_EQ(h.Max(), 42u);
  EXPECT_EQ(h.ValueAtPercentile(50), 42u);
}

}  // namespace
}  // namespace strata::bench
