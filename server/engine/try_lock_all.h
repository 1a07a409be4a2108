// TryLockAll: a multi-shard command's intent locks taken on all its shards at once.
//
//   if (!co_await TryLockAll(g[, step]))
//     for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
//
// The ordered way (LockOn shard by shard, in increasing shard order, each waiting in the
// shard's FIFO queue as needed; lock_table.h) costs one round trip per shard, one after
// another: a 10-key command over 8 shards waited for 8 hops before its first step. This
// asks every shard in parallel instead, in one round trip:
//   - each shard grants its group's request only if it can at once (nothing conflicting
//     held, nothing queued on its keys: LockTable::CanRun) and never queues it, then runs
//     step(w, group) there when one is given (a read-only command's whole work: MGET reads
//     its keys in the same hop);
//   - true: every shard granted. The fiber holds all the locks, exactly as after LockOn on
//     each shard in order, and each step ran under them;
//   - false: some shard could not grant. What the others granted is released (in order
//     with the fiber's later messages to them), the steps' results are to be discarded,
//     and the caller takes the locks the ordered way.
// No fiber ever waits for a lock here, so taking locks out of shard order cannot close a
// cycle with another fiber: one that waits (the ordered way) holds locks only on shards
// below the one it waits on, and one here waits for none. A refused fiber holds nothing
// when it starts the ordered way, which queues it fairly behind the holders.
//
// Serializability is the two-phase locking of the ordered way: a step runs with its
// shard's locks held, and no lock is released before every shard has granted. A step
// that ran on a shard whose sibling refused may have counted its reads (keyspace hits and
// misses, a key's access time): the ordered way's steps count them again.
//
// Not tried (false at once, nothing done) where the ordered way has more to do: with the
// spill tier (LockOn reads the keys' cold values back first), inside a transaction (its
// nested holds), under a SyncHopScope (a script that holds the shards), and for
// whole-shard and script requests.
//
// ReleaseAll(g, exclusive) releases every group's locks without waiting: on the fiber's
// own shard at once, on the others by a message each (the keys copied into it).
// Thread-safety: awaited on the fiber's own worker thread; a shard's part runs on that
// shard's thread.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "server/engine/hops.h"
#include "server/engine/shard_groups.h"

namespace strata {

// Releases what the listed groups hold (all when `which` is null, else those with a
// nonzero entry); never waits.
inline void ReleaseAll(const ShardGroups& g, const std::vector<char>* which = nullptr) {
  Worker* origin = Worker::Current();
  for (size_t i = 0; i < g.shards.size(); i++) {
    if (which != nullptr && (*which)[i] == 0) continue;
    const LockTable::Request& r = g.locks[i];
    if (g.shards[i] == origin->index()) {
      origin->locks().Release(r.keys, r.exclusive);
      continue;
    }
    origin->Post(g.shards[i], MakeTask([keys = r.keys, exclusive = r.exclusive] {
                   Worker::Current()->locks().Release(keys, exclusive);
                 }));
  }
}

class TryLockAll {
 public:
  using Step = std::function<void(Worker&, size_t)>;
  explicit TryLockAll(ShardGroups& g, Step step = {}) : g_(g), step_(std::move(step)) {}

  bool await_ready() {
    origin_ = Worker::Current();
    fiber_ = t_fiber_origin;
    if (!Eligible()) return true;  // await_resume: false, nothing tried
    tried_ = true;
    granted_.assign(g_.shards.size(), 0);
    if (step_ && PubSubInUse()) [[unlikely]]
      captured_.resize(g_.shards.size());
    return false;  // two shards or more, so another worker's among them
  }

  bool await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    remaining_ = g_.shards.size();
    const uint32_t home = origin_->index();
    for (size_t i = 0; i < g_.shards.size(); i++) {
      if (g_.shards[i] == home) {
        Try(*origin_, i);
        remaining_--;
        continue;
      }
      origin_->Post(g_.shards[i], MakeTask([this, i, home] {
                      Worker* w = Worker::Current();
                      Try(*w, i);
                      w->Post(home, MakeTask([this] {
                                if (--remaining_ == 0) handle_.resume();
                              }));
                    }));
    }
    return remaining_ != 0;
  }

  bool await_resume() {
    if (!tried_) return false;
    bool all = true;
    for (char granted : granted_) all = all && granted != 0;
    if (!all) {
      ReleaseAll(g_, &granted_);
      return false;
    }
    if (!captured_.empty()) [[unlikely]] {
      CapturedMessages msgs;
      for (CapturedMessages& c : captured_) {
        for (CapturedMessage& m : c) msgs.push_back(std::move(m));
      }
      PublishCaptured(&msgs);
    }
    return true;
  }

 private:
  bool Eligible() const {
    if (SyncHopScope::Active() || origin_->cold_gate() != nullptr || g_.shards.size() < 2)
      return false;
    for (const LockTable::Request& r : g_.locks) {
      if (r.owner != 0 || r.whole || r.then_hops) return false;
    }
    return true;
  }

  // On shard i's thread: grants at once or not at all.
  void Try(Worker& w, size_t i) {
    LockTable& locks = w.locks();
    const LockTable::Request& r = g_.locks[i];
    if (!locks.empty() && !locks.CanRun(r)) return;
    locks.Acquire(r);
    granted_[i] = 1;
    if (step_) {
      RunFiberStep(fiber_, w, captured_.empty() ? nullptr : &captured_[i],
                   [this, i](Worker& sw) { step_(sw, i); });
    }
  }

  ShardGroups& g_;
  Step step_;
  const FiberOrigin* fiber_ = nullptr;
  Worker* origin_ = nullptr;
  bool tried_ = false;
  std::vector<char> granted_;  // per group; written by that shard's thread
  std::vector<CapturedMessages> captured_;
  std::coroutine_handle<> handle_;
  size_t remaining_ = 0;
};

}  // namespace strata
