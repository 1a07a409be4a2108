// Access state: the 24 bits every key's entry carries (Entry::Access) for eviction and
// for OBJECT IDLETIME / OBJECT FREQ. The same bits mean one of two things, as in Redis,
// chosen by the eviction policy (an *-lfu policy selects LFU, any other LRU):
//
//   LRU  the time of the last access, in seconds (a 24-bit clock that wraps every 194
//        days; an idle time is the clock's distance, modulo the wrap).
//   LFU  bits 8-23: the minute of the last decrement (16 bits, wraps every 45 days);
//        bits 0-7: a logarithmic access counter. A new key starts at kLfuInitVal so that
//        it is not evicted before it has a chance to be read again. Each access first
//        decays the counter by one per lfu-decay-time minutes elapsed, then increments it
//        with probability 1 / ((counter - kLfuInitVal) * lfu-log-factor + 1), so 255 is
//        reached after about a million accesses at the default factor of 10.
//
// Switching policy at runtime reinterprets the bits, as Redis does: the data takes some
// time to adjust. Three bytes buy exactly Redis's semantics: fewer would wrap within
// hours (16 bits of seconds) or need a sweep to age every key (8 bits).
//
// Pure functions; any thread.
#pragma once

#include <cstdint>

namespace strata::access {

enum class Mode : uint8_t { kLru, kLfu };

constexpr uint32_t kClockMax = (1u << 24) - 1;
constexpr int64_t kLruResolutionMs = 1000;
constexpr uint8_t kLfuInitVal = 5;

inline uint32_t LruClock(int64_t now_ms) {
  return static_cast<uint32_t>(now_ms / kLruResolutionMs) & kClockMax;
}

// Milliseconds since the access recorded as `lru`, at clock `clock`.
inline uint64_t LruIdleMs(uint32_t clock, uint32_t lru) {
  uint64_t ticks = clock >= lru ? clock - lru : clock + (kClockMax - lru);
  return ticks * kLruResolutionMs;
}

// The LRU state of a key last accessed idle_s seconds before now_ms (RESTORE IDLETIME,
// an RDB's IDLE), on the wrapping clock.
inline uint32_t LruStateIdle(int64_t now_ms, int64_t idle_s) {
  int64_t clock = static_cast<int64_t>(LruClock(now_ms));
  int64_t at = clock - (idle_s < static_cast<int64_t>(kClockMax) ? idle_s : kClockMax);
  if (at < 0) at += kClockMax;
  return static_cast<uint32_t>(at);
}

inline uint32_t LfuMinutes(int64_t now_ms) {
  return static_cast<uint32_t>(now_ms / 60000) & 0xFFFF;
}
inline uint32_t LfuState(uint32_t minutes, uint8_t counter) {
  return ((minutes & 0xFFFF) << 8) | counter;
}
inline uint8_t LfuCounter(uint32_t state) { return static_cast<uint8_t>(state & 0xFF); }

// Minutes since the state's decrement minute (once wrapped at most).
inline uint32_t LfuElapsedMinutes(uint32_t now_minutes, uint32_t state) {
  uint32_t ldt = state >> 8;
  return now_minutes >= ldt ? now_minutes - ldt : 65535 - ldt + now_minutes;
}

// The counter after decay: one less per decay_time minutes elapsed (0: no decay).
inline uint8_t LfuDecayed(uint32_t state, uint32_t now_minutes, int64_t decay_time) {
  uint8_t counter = LfuCounter(state);
  if (decay_time <= 0) return counter;
  uint32_t periods = LfuElapsedMinutes(now_minutes, state) / static_cast<uint32_t>(decay_time);
  return periods > counter ? 0 : static_cast<uint8_t>(counter - periods);
}

// The counter after one access, given a uniform random r in [0, 1).
inline uint8_t LfuIncrement(uint8_t counter, int64_t log_factor, double r) {
  if (counter == 255) return 255;
  double base = counter > kLfuInitVal ? counter - kLfuInitVal : 0;
  double p = 1.0 / (base * static_cast<double>(log_factor) + 1);
  return r < p ? static_cast<uint8_t>(counter + 1) : counter;
}

// The settings an access is recorded with; a shard refreshes them once per loop turn.
struct Clock {
  Mode mode = Mode::kLru;
  uint32_t lru_clock = 0;
  uint32_t lfu_minutes = 0;
  int64_t lfu_log_factor = 10;
  int64_t lfu_decay_time = 1;

  static Clock At(int64_t now_ms, Mode mode, int64_t log_factor, int64_t decay_time) {
    return Clock{mode, LruClock(now_ms), LfuMinutes(now_ms), log_factor, decay_time};
  }
  // The state of a key created now.
  uint32_t Initial() const {
    return mode == Mode::kLru ? lru_clock : LfuState(lfu_minutes, kLfuInitVal);
  }
  // The state after an access to a key whose state was `state`; r uniform in [0, 1).
  uint32_t Touched(uint32_t state, double r) const {
    if (mode == Mode::kLru) return lru_clock;
    uint8_t c = LfuDecayed(state, lfu_minutes, lfu_decay_time);
    return LfuState(lfu_minutes, LfuIncrement(c, lfu_log_factor, r));
  }
};

}  // namespace strata::access
