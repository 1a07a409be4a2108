#include "tools/strata-bench/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace strata::bench {
namespace {

// HdrHistogram layout for lowest = 1, highest = kMaxValue, 3 significant digits.
constexpr int kSubBucketHalfCountMagnitude = 10;
constexpr uint64_t kSubBucketCount = 2048;
constexpr uint64_t kSubBucketHalfCount = kSubBucketCount / 2;
constexpr uint64_t kSubBucketMask = kSubBucketCount - 1;

constexpr int BucketCount() {
  uint64_t smallest_untrackable = kSubBucketCount;
  int buckets = 1;
  while (smallest_untrackable <= LatencyHistogram::kMaxValue) {
    smallest_untrackable <<= 1;
    ++buckets;
  }
  return buckets;
}
constexpr size_t kCountsLen = static_cast<size_t>(BucketCount() + 1) * kSubBucketHalfCount;

}  // namespace

LatencyHistogram::LatencyHistogram() : counts_(kCountsLen, 0) {}

size_t LatencyHistogram::IndexOf(uint64_t v) {
  const int pow2_ceiling = 64 - std::countl_zero(v | kSubBucketMask);
  const int bucket = pow2_ceiling - (kSubBucketHalfCountMagnitude + 1);
  const uint64_t sub_bucket = v >> bucket;
  return (static_cast<size_t>(bucket + 1) << kSubBucketHalfCountMagnitude) +
         (sub_bucket - kSubBucketHalfCount);
}

uint64_t LatencyHistogram::HighestEquivalentAt(size_t index) {
  int bucket = static_cast<int>(index >> kSubBucketHalfCountMagnitude) - 1;
  uint64_t sub_bucket = (index & (kSubBucketHalfCount - 1)) + kSubBucketHalfCount;
  if (bucket < 0) {
    sub_bucket -= kSubBucketHalfCount;
    bucket = 0;
  }
  const uint64_t lowest = sub_bucket << bucket;
  const uint64_t range = uint64_t{1} << bucket;
  return lowest + range - 1;
}

void LatencyHistogram::RecordN(uint64_t us, uint64_t n) {
  if (n == 0) return;
  const uint64_t v = std::min(us, kMaxValue);
  counts_[IndexOf(v)] += n;
  if (count_ == 0 || v < min_) min_ = v;
  if (v > max_) max_ = v;
  count_ += n;
  sum_ += v * n;
}

double LatencyHistogram::Mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_);
}

uint64_t LatencyHistogram::ValueAtPercentile(double p) const {
  if (count_ == 0) return 0;
  if (!(p > 0)) return Min();  // also NaN
  if (p >= 100) return Max();
  const double exact = p / 100.0 * static_cast<double>(count_);
  uint64_t rank = static_cast<uint64_t>(std::ceil(exact));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(HighestEquivalentAt(i), Min(), Max());
  }
  return Max();
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
}

void LatencyHistogram::Reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = min_ = max_ = sum_ = 0;
}

}  // namespace strata::bench
