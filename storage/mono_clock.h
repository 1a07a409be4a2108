// MonoNs: the monotonic clock in nanoseconds, for time slices (snapshot writing and
// loading steps); UnixMsNow: the wall clock in milliseconds since the epoch, for
// timestamps. Thread-safety: any thread.
#pragma once

#include <time.h>

#include <cstdint>

namespace strata {

inline int64_t MonoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline int64_t UnixMsNow() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace strata
