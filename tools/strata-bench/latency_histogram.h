// LatencyHistogram: latencies in microseconds, for `strata-bench` percentiles.
//
// An HdrHistogram-style log-linear histogram with 3 significant decimal digits: values
// 0..2047 are counted exactly, and above that each power-of-two range [2^k, 2^(k+1)) is
// split into 1024 equal sub-buckets, so any reported value is within 1/1024 (< 0.1%) of a
// recorded one. The trackable range is 1 us to kMaxValue (60 s); larger values are clamped
// to kMaxValue and still counted. It owns one fixed array of counts (~136 KiB) allocated
// in the constructor; Record() never allocates. Count, min, max and an exact running sum
// (for Mean) are kept alongside.
// Thread-safety: none. Each worker thread records into its own histogram; merge them
// into one after the workers stop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::bench {

class LatencyHistogram {
 public:
  static constexpr uint64_t kMaxValue = 60'000'000;  // 60 s in microseconds

  LatencyHistogram();

  void Record(uint64_t us) { RecordN(us, 1); }
  void RecordN(uint64_t us, uint64_t n);

  uint64_t Count() const { return count_; }
  uint64_t Min() const { return count_ == 0 ? 0 : min_; }
  uint64_t Max() const { return max_; }
  // Exact mean of the recorded (clamped) values; 0 when empty.
  double Mean() const;
  // p in [0, 100]: the highest value equivalent (within the precision) to the one at rank
  // ceil(p / 100 * Count()), never above Max(). p = 0 gives Min(), p = 100 gives Max();
  // 0 when empty. p outside [0, 100] is clamped.
  uint64_t ValueAtPercentile(double p) const;

  void Merge(const LatencyHistogram& other);
  void Reset();

 private:
  static size_t IndexOf(uint64_t v);
  static uint64_t HighestEquivalentAt(size_t index);

  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t min_ = 0;
  uint64_t max_ = 0;
  uint64_t sum_ = 0;
};

}  // namespace strata::bench
