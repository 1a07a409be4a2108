// WakeupBatchPolicy: how many completions a sleeping io_uring loop asks for in one wait
// under io-uring-wakeup-batch N > 1 (uring_loop.cc, "Wake-up batching").
//
// Each wake-up of a sleeping worker costs a context switch and a system call, which at
// pipeline 1 is paid per request. Asking for k completions (within the bound,
// io-uring-wakeup-batch-usec) lets one wake-up serve k clients, at the price of holding
// the first request until the k-th arrives or the bound passes. The policy asks for more
// than one only where the load says the batch will come soon:
//   - the arrival rate: no more than the input completions that, at the rate of the
//     last ~2 ms window, are expected within half the bound. A load too slow to fill a
//     batch well inside the bound is never held for one;
//   - the clients: at most half the connections that sent input in the last ~2 ms, so one
//     client at a time (waiting for its reply before sending again) is never held;
//   - a level that grows by one after each wait that filled and halves after one that
//     ran out of time, capped at N;
//   - none while other threads woke the loop in the last ~2 ms: a wake (another worker's
//     commands or replies, a pub/sub message...) is one completion, and a wait for
//     several would hold the work it brings.
// A window that ends after a silence of twice its length or more counts for nothing.
//
// Pure logic over the times it is given (microseconds of a monotonic clock); unit-tested
// in tests/unit/server/net/wakeup_batch_policy_test.cc.
// Thread-safety: one loop's thread.
#pragma once

#include <algorithm>
#include <cstdint>

namespace strata {

class WakeupBatchPolicy {
 public:
  // The window over which input and wakes are counted.
  static constexpr int64_t kWindowUs = 2000;

  // io-uring-wakeup-batch and io-uring-wakeup-batch-usec.
  void Configure(unsigned max_batch, unsigned bound_us) {
    max_ = std::max(1u, max_batch);
    bound_us_ = std::max(1u, bound_us);
  }
  bool on() const { return max_ > 1; }
  unsigned max_batch() const { return max_; }
  unsigned bound_us() const { return bound_us_; }

  // A completion with input from a connection; *conn_window is that connection's own
  // record of the last window it was counted in (0 at first).
  void NoteInput(uint64_t* conn_window) {
    arrivals_now_++;
    if (*conn_window == window_) return;
    *conn_window = window_;
    inputs_now_++;
  }
  // Another thread woke the loop.
  void NoteWake() { wakes_now_ = true; }

  // How many completions (beyond its own sends) the next wait asks for: 1 or more.
  unsigned Wanted(int64_t now_us) {
    int64_t elapsed = now_us - window_start_us_;
    if (elapsed >= kWindowUs) {
      bool gap = elapsed >= 2 * kWindowUs;
      inputs_before_ = gap ? 0 : inputs_now_;
      wakes_before_ = !gap && wakes_now_;
      // At the window's rate, the arrivals within half the bound.
      expected_ =
          gap ? 0
              : static_cast<unsigned>(std::min<uint64_t>(
                    uint64_t{arrivals_now_} * bound_us_ / (2 * static_cast<uint64_t>(elapsed)),
                    max_));
      inputs_now_ = 0;
      arrivals_now_ = 0;
      wakes_now_ = false;
      window_++;
      window_start_us_ = now_us;
    }
    if (wakes_now_ || wakes_before_) return 1;
    unsigned active = std::max(inputs_now_, inputs_before_);
    return std::clamp(std::min({level_, active / 2, expected_}), 1u, max_);
  }
  // After a wait that asked for `asked` completions (its sends included) and saw `seen`.
  void AfterWait(unsigned seen, unsigned asked) {
    level_ = seen >= asked ? std::min(level_ + 1, max_) : std::max(1u, level_ / 2);
  }

 private:
  unsigned max_ = 1;
  unsigned bound_us_ = 100;
  unsigned level_ = 1;
  uint64_t window_ = 1;  // the window connections' input is counted in
  int64_t window_start_us_ = 0;
  unsigned inputs_now_ = 0;     // connections that sent input in this window
  unsigned inputs_before_ = 0;  // and in the one before
  unsigned arrivals_now_ = 0;   // completions with input in this window
  unsigned expected_ = 0;       // arrivals within half the bound, at the last window's rate
  bool wakes_now_ = false;      // another thread woke the loop in this window
  bool wakes_before_ = false;   // and in the one before
};

}  // namespace strata
