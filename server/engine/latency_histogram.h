// Per-command latency histograms (latency-tracking): what INFO latencystats and LATENCY
// HISTOGRAM report.
//
// A histogram counts runs by their CycleClock ticks in log-linear buckets: exact below 8
// ticks, then eight buckets per power of two, so a bucket's width is at most 1/8 of its
// value (Redis's HdrHistogram keeps two significant digits; percentiles here are within
// 12.5%, the same order). 496 buckets cover every 64-bit tick count; a worker allocates
// a command's buckets (4 KB) on its first timed run. Recording is a few instructions on
// the command's path (Worker::CountCall); reading converts ticks to microseconds.
//
// Thread-safety: each worker's histograms are its own; INFO and LATENCY copy them with a
// hop and merge the copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::latency {

constexpr int kSubBits = 3;                                   // 8 buckets per power of two
constexpr size_t kBuckets = (64 - kSubBits + 1) << kSubBits;  // 496

// The bucket of a run of `ticks`.
inline size_t Bucket(uint64_t ticks) {
  if (ticks < (1u << kSubBits)) return static_cast<size_t>(ticks);
  int e = 63 - __builtin_clzll(ticks);  // >= kSubBits
  return (static_cast<size_t>(e - kSubBits + 1) << kSubBits) |
         static_cast<size_t>((ticks >> (e - kSubBits)) & ((1u << kSubBits) - 1));
}

// The highest tick count of bucket b.
inline uint64_t BucketUpperTicks(size_t b) {
  if (b < (1u << kSubBits)) return b;
  int e = static_cast<int>(b >> kSubBits) + kSubBits - 1;
  uint64_t sub = b & ((1u << kSubBits) - 1);
  uint64_t low = (uint64_t{1} << e) | (sub << (e - kSubBits));
  return low + (uint64_t{1} << (e - kSubBits)) - 1;
}

// Adds b's counts into a (either may be empty: no run yet).
void Merge(std::vector<uint64_t>* a, const std::vector<uint64_t>& b);

uint64_t Total(const std::vector<uint64_t>& h);

// The p-th percentile (0 < p <= 100) in microseconds: the upper edge of the bucket where
// the cumulative count reaches p% of the runs. 0 for an empty histogram.
double PercentileMicros(const std::vector<uint64_t>& h, double p, uint64_t ticks_per_us);

// LATENCY HISTOGRAM's buckets, as Redis reports them. Redis iterates its HdrHistogram (two
// significant digits: 128 sub-buckets per power of two) in steps of 1024 ns, 2048 ns,
// 4096 ns... and labels each step with the highest value its sub-bucket holds, in whole
// microseconds: 1, 2, 4, 8, 16, 33, 66, 132, 264... It records at most 1 s, so the step
// at 2^30 ns (labelled 1073741) takes every longer run. Counts are cumulative and only
// the steps where the count grows are listed.
constexpr uint64_t kFirstBoundNs = 1024;
constexpr uint64_t kLastBoundNs = uint64_t{1} << 30;

// The highest nanosecond value in HdrHistogram's sub-bucket of `bound_ns` (a power of
// two of at least 256): bound + bound/128 - 1.
constexpr uint64_t HighestEquivalentNs(uint64_t bound_ns) {
  return bound_ns >= kLastBoundNs ? kLastBoundNs - 1 : bound_ns + bound_ns / 128 - 1;
}

std::vector<std::pair<uint64_t, uint64_t>> CumulativeMicros(const std::vector<uint64_t>& h,
                                                            uint64_t ticks_per_us);

}  // namespace strata::latency
