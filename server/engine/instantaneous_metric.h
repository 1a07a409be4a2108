// InstantaneousMetric: a counter's recent rate, as Redis reports instantaneous_ops_per_sec
// and instantaneous_input_kbps: sampled on the worker's timer (hz, every 100 ms by
// default), each sample is the counter's growth per second since the sample before; the
// rate is the mean of the last kSamples samples (Redis divides by kSamples from the
// start too, so a fresh server's rate ramps up over its first ~1.6 s).
// INFO adds the workers' rates up.
// Thread-safety: the owning worker's thread (INFO reads a copy taken there).
#pragma once

#include <cstdint>

namespace strata {

class InstantaneousMetric {
 public:
  static constexpr int kSamples = 16;

  // value: the counter now; it only grows (a reset replaces this object with it).
  void Sample(int64_t now_ms, uint64_t value) {
    if (last_ms_ != 0 && now_ms > last_ms_ && value >= last_value_) {
      samples_[next_] = (value - last_value_) * 1000 / static_cast<uint64_t>(now_ms - last_ms_);
      next_ = (next_ + 1) % kSamples;
    }
    if (now_ms > last_ms_ || last_ms_ == 0) {
      last_ms_ = now_ms;
      last_value_ = value;
    }
  }
  // Per second, over the last kSamples samples.
  uint64_t PerSecond() const {
    uint64_t sum = 0;
    for (uint64_t s : samples_) sum += s;
    return sum / kSamples;
  }

 private:
  uint64_t samples_[kSamples] = {};
  int next_ = 0;
  int64_t last_ms_ = 0;
  uint64_t last_value_ = 0;
};

}  // namespace strata
