// MonoNs: the monotonic clock in nanoseconds, for time slices (snapshot writing and
// loading steps). Thread-safety: any thread.
#pragma once

#include <time.h>

#include <cstdint>

namespace strata {

inline int64_t MonoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace strata
