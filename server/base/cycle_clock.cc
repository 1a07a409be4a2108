#include "server/base/cycle_clock.h"

namespace strata {
namespace {
uint64_t MonoNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
}  // namespace

void CycleClock::Calibrate() {
  uint64_t n0 = MonoNanos();
  uint64_t c0 = Now();
  uint64_t n1 = n0;
  while (n1 - n0 < 10000000) n1 = MonoNanos();
  uint64_t c1 = Now();
  uint64_t per_us = (c1 - c0) * 1000 / (n1 - n0);
  ticks_per_us_ = per_us == 0 ? 1 : per_us;
}

}  // namespace strata
