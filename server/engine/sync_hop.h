// SyncHop: runs a function on another worker's thread while the calling worker waits,
// blocked, for it to finish. This is how a script that spans shards reaches them: its
// Lua runs to its end on the client's worker, and each redis.call on another shard is a
// synchronous hop there (docs/ARCHITECTURE.md "Scripts").
//
// Why it cannot deadlock: a worker blocks in SyncHop only while it runs such a script,
// and such a script first holds the whole-shard lock (lock_table.h) of every shard it
// hops to *and of its own worker's shard*, all taken in shard order as one owner. A
// worker that blocks therefore holds its own shard; the shards it waits for are held by
// it too, so no other blocked worker holds them, and their threads are free to run the
// hop (their lock tables keep every other command queued). A hop's destination is never
// waiting on the hopping worker.
//
// SyncHopScope switches the awaitables of hops.h (RunOn, LockOn, RunLocked) to this
// synchronous form on the current thread, so a multi-shard command (an MSET across
// shards, a RENAME, DBSIZE) called from such a script runs its fiber to its end inside
// the call. Its lock requests carry the script's owner and are granted as nested holds.
//
// Thread-safety: called on a worker thread; fn runs on the destination's thread and may
// touch only that shard's state and memory the caller owns (the caller is blocked).
#pragma once

#include <cstdint>
#include <functional>

namespace strata {

class Worker;

// Runs fn on worker `dest` (inline when it is the calling worker) and returns once it
// has run. False when the process is stopping before it ran (fn then never runs).
bool SyncHop(uint32_t dest, const std::function<void(Worker&)>& fn);

// While one exists on this thread, the hops of hops.h are synchronous (SyncHop).
class SyncHopScope {
 public:
  SyncHopScope();
  ~SyncHopScope();
  SyncHopScope(const SyncHopScope&) = delete;
  SyncHopScope& operator=(const SyncHopScope&) = delete;
  static bool Active();

 private:
  bool previous_;
};

}  // namespace strata
