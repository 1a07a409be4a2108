// SnapshotPace: how much of its worker's time a shard's snapshot traversal may take, and
// whether the worker may sleep while the traversal waits for that time.
//
// While clients are served (a command in the last kActiveWindowNs), the traversal earns
// 1/kShareDivisor of the time the loop spends on everything else, turn by turn, and
// steps once it has kMinStepNs; a step that runs past its budget is owed by later turns.
// With no command for kActiveWindowNs the shard is idle and steps in kIdleStepNs slices.
//
// Sleeping. A worker whose traversal has no time to spend while clients are active does
// not spin on its loop waiting for the next turn's share: spinning burns the very time
// the share rations, and where workers share a core (more threads than cores, a CPU
// quota, a busy neighbour) it takes that time from the other workers serving clients.
// Ready() says whether a step could be taken now (the worker must not sleep);
// kSleepBoundNs bounds a sleep while a traversal is pending, so that a shard whose
// clients went quiet resumes idle slices within it.
//
// Pure: the caller passes the times (monotonic ns). Thread-safety: one per shard, used
// by its worker only.
#pragma once

#include <algorithm>
#include <cstdint>

namespace strata {

class SnapshotPace {
 public:
  static constexpr int64_t kShareDivisor = 10;             // <= 1/10 of client time
  static constexpr int64_t kMinStepNs = 20 * 1000;         // the smallest slice worth taking
  static constexpr int64_t kIdleStepNs = 1000 * 1000;      // the slice of an idle turn
  static constexpr int64_t kActiveWindowNs = 1000 * 1000;  // no command for this long: idle
  static constexpr int64_t kSleepBoundNs = kActiveWindowNs;

  // A loop turn ends at now_ns; the rest of it took turn_ns and ran commands when busy.
  // Returns the budget of the step to take now, 0 for none.
  int64_t OnTurn(int64_t now_ns, int64_t turn_ns, bool busy) {
    if (busy) last_busy_ns_ = now_ns;
    if (!Active(now_ns)) return kIdleStepNs;
    credit_ns_ = std::min(credit_ns_ + turn_ns / kShareDivisor, kIdleStepNs);
    return credit_ns_ < kMinStepNs ? 0 : credit_ns_;
  }
  // The step took step_ns.
  void Stepped(int64_t step_ns) { credit_ns_ = std::max(-kIdleStepNs, credit_ns_ - step_ns); }
  // Whether a step could be taken at now_ns: the shard is idle, or the share earned is
  // enough. False: the worker may sleep (for at most kSleepBoundNs) until input comes.
  bool Ready(int64_t now_ns) const { return !Active(now_ns) || credit_ns_ >= kMinStepNs; }
  bool Active(int64_t now_ns) const { return now_ns - last_busy_ns_ < kActiveWindowNs; }
  int64_t credit_ns() const { return credit_ns_; }

 private:
  int64_t credit_ns_ = 0;  // traversal time earned by serving clients (negative: owed)
  // The last turn that ran commands; far in the past at first, so a new shard is idle.
  int64_t last_busy_ns_ = INT64_MIN / 2;
};

}  // namespace strata
