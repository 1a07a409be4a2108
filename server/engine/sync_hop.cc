#include "server/engine/sync_hop.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <ctime>

#include "server/base/config.h"
#include "server/engine/engine.h"
#include "server/engine/pubsub.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

thread_local bool t_sync_hops = false;

// The caller spins script-hop-spin-us before sleeping on the futex: a hop to a worker
// that is awake (it polls while a script holds it: Worker::PollAfterHop) answers within
// that; one that must be woken first takes longer, and the caller sleeps.

// One hop's state: pending, then running (the destination took it) or cancelled (the
// caller gave up because the process is stopping), then done.
struct HopCall {
  enum : uint32_t { kPending, kRunning, kCancelled, kDone };
  const std::function<void(Worker&)>* fn = nullptr;
  std::atomic<uint32_t> state{kPending};
  Task task;
};

void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, long timeout_ns) {
  timespec ts{0, timeout_ns};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, &ts, nullptr,
          0);
}

void FutexWake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void RunHop(void* p) {
  auto* h = static_cast<HopCall*>(p);
  uint32_t expected = HopCall::kPending;
  if (!h->state.compare_exchange_strong(expected, HopCall::kRunning)) {
    delete h;  // the caller gave up (stopping) and left it to us
    return;
  }
  Worker* w = Worker::Current();
  (*h->fn)(*w);
  h->state.store(HopCall::kDone, std::memory_order_release);
  FutexWake(&h->state);
  w->PollAfterHop();
}

}  // namespace

namespace {

bool HopAndWait(Worker* w, uint32_t dest, const std::function<void(Worker&)>& fn) {
  auto* h = new HopCall;
  h->fn = &fn;
  h->task = Task{RunHop, h};
  w->PostHop(dest, &h->task);
  // A hop usually takes microseconds: spin a little before sleeping on the futex.
  int64_t spin_us = w->engine().config().Int("script-hop-spin-us");
  int64_t spin_until = WallClockUs() + spin_us;
  for (int i = 0; spin_us > 0; i++) {
    if (h->state.load(std::memory_order_acquire) == HopCall::kDone) {
      delete h;
      return true;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if ((i & 63) == 63 && WallClockUs() >= spin_until) break;
  }
  for (;;) {
    uint32_t s = h->state.load(std::memory_order_acquire);
    if (s == HopCall::kDone) break;
    if (s == HopCall::kPending && w->stopping()) {
      uint32_t expected = HopCall::kPending;
      // Not taken: the destination deletes it if it ever gets to it.
      if (h->state.compare_exchange_strong(expected, HopCall::kCancelled)) return false;
      continue;
    }
    FutexWait(&h->state, s, 10 * 1000 * 1000);  // wakes to look at stopping()
  }
  delete h;
  return true;
}

}  // namespace

bool SyncHop(uint32_t dest, const std::function<void(Worker&)>& fn) {
  Worker* w = Worker::Current();
  if (dest == w->index()) {
    fn(*w);
    return true;
  }
  if (PubSubInUse()) [[unlikely]] {
    // What the hop publishes is published from here, after it (pubsub.h: one script's
    // messages from several shards then reach each subscriber in the script's order).
    CapturedMessages captured;
    std::function<void(Worker&)> captured_fn = [&](Worker& there) {
      PublishCapture capture(&captured);
      fn(there);
    };
    bool done = HopAndWait(w, dest, captured_fn);
    if (done) PublishCaptured(&captured);
    return done;
  }
  return HopAndWait(w, dest, fn);
}

SyncHopScope::SyncHopScope() : previous_(t_sync_hops) { t_sync_hops = true; }
SyncHopScope::~SyncHopScope() { t_sync_hops = previous_; }
bool SyncHopScope::Active() { return t_sync_hops; }

}  // namespace strata
