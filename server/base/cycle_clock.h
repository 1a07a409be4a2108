// CycleClock: a cheap timer for per-command statistics (INFO commandstats usec).
//
// Reading the time-stamp counter costs a few nanoseconds where clock_gettime costs tens,
// which matters when it runs twice per command. Ticks are converted to microseconds
// with a rate calibrated once at start-up against CLOCK_MONOTONIC. Falls back to
// clock_gettime on CPUs without an invariant TSC readable from user space (non-x86).
// Thread-safety: Now() from any thread; Calibrate() once, before workers start.
#pragma once

#include <time.h>

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace strata {

class CycleClock {
 public:
  static uint64_t Now() {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
#endif
  }
  // Measures ticks per microsecond over ~10 ms.
  static void Calibrate();
  static uint64_t TicksPerMicro() { return ticks_per_us_ == 0 ? 1 : ticks_per_us_; }
  static uint64_t ToMicros(uint64_t ticks) {
    return ticks_per_us_ == 0 ? 0 : ticks / ticks_per_us_;
  }

 private:
  static inline uint64_t ticks_per_us_ = 1000;
};

}  // namespace strata
