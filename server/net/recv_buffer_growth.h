// RecvBufferGrowth: how many provided receive buffers an io_uring loop keeps in its ring
// (uring_loop.cc, "recv").
//
// The kernel takes provided buffers from the ring's head in order, and the loop puts
// each one back at the tail as soon as it has copied the bytes out. So every buffer in
// the ring is used in turn, and each page a receive wrote stays resident: the ring's
// size, not the traffic, decided the memory (a fixed 128 x 16 KiB a worker, resident
// after the first few hundred reads, whatever the number of clients).
//
// The ring therefore starts with a few buffers and grows only when the load needs more:
//   - a pass whose receives took three quarters or more of the buffers in the ring (the
//     kernel fills them all in one io_uring_enter, before the loop returns any), or
//   - a receive that found none (-ENOBUFS, which also ends that connection's multishot
//     receive: the loop arms it again, and its bytes wait in the socket meanwhile)
// doubles the count, up to the maximum. It never shrinks: a buffer in the ring may be
// written by the kernel at any time, so it cannot be released, and taking buffers out as
// they come back would leave the rest of a burst's buffers resident anyway.
//
// Pure logic; unit-tested in tests/unit/server/net/recv_buffer_growth_test.cc.
// Thread-safety: one loop's thread.
#pragma once

#include <algorithm>

namespace strata {

class RecvBufferGrowth {
 public:
  // initial <= max; both at least 1.
  RecvBufferGrowth(unsigned initial, unsigned max)
      : max_(std::max(1u, max)), count_(std::clamp(initial, 1u, max_)) {}

  // Buffers the ring should hold now.
  unsigned count() const { return count_; }
  unsigned max() const { return max_; }

  // After a pass: `used` completions carried a buffer, and `ran_out` says whether a
  // receive found none. Returns the new count (never less than before).
  unsigned AfterPass(unsigned used, bool ran_out) {
    if (count_ < max_ && (ran_out || used * 4 >= count_ * 3)) count_ = std::min(max_, count_ * 2);
    return count_;
  }

 private:
  unsigned max_;
  unsigned count_;
};

}  // namespace strata
