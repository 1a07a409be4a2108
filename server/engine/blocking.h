// Blocking commands: how a client waits for a key that lives on another thread, and how
// it is served. The engine knows the waiting, not the commands: a blocking command
// (today the list pops BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP and the sorted-set pops
// BZPOPMIN, BZPOPMAX, BZMPOP) derives its waiter from BlockedClient and says, on the
// key's shard, whether the key holds what it waits for (Check) and what to take (Take).
//
// How it works
//   A blocking command runs as a fiber on the client's worker (its "origin"). It locks
//   its keys (the usual per-shard intent locks), tries to pop as the non-blocking form
//   would, and if every list is empty it registers one BlockedClient, shared by pointer,
//   in the FIFO queue of each of its keys on the key's shard, then releases the locks
//   and suspends. Registration under the locks means no push can slip in between the
//   failed try and the registration.
//
//   A write that gives a key elements calls Worker::SignalKeyReady on the key's shard,
//   which serves the key's queue right away, inside the writing command: the first waiter
//   in FIFO order whose Check() finds elements is claimed with a compare-and-swap of its
//   state (kWaiting -> kServed), its Take() pops them on that shard (and, for BLMOVE with
//   both keys on that shard, pushes to the destination) into the waiter, and a task
//   resumes the fiber on its origin. This repeats while the key has elements and waiters
//   remain. Clients are therefore served in the order they blocked, on every key, however
//   many threads are involved.
//
//   A waiter can be claimed only once: the timeout (checked by the origin worker each
//   loop turn) and a disconnect (Connection::Kill) move the state kWaiting ->
//   kCancelled with the same compare-and-swap, so exactly one of "served", "timed out"
//   and "disconnected" wins. Elements are popped only by the winner of kServed, so an
//   element is never taken for a client that timed out or left; a client that wins
//   kServed gets its reply (if its socket closed meanwhile, the reply is discarded, as
//   Redis discards a reply written to a client that then disconnects).
//
//   A key's queue may hold list waiters and sorted-set waiters at once: each is served
//   only while the key holds its type (Check says kOtherType, and the waiter keeps its
//   place), as Redis serves a key's clients by the type they wait for.
//
//   After waking, the fiber removes its BlockedClient from every queue it was in (one
//   hop per shard). Queues also drop claimed or cancelled waiters they meet.
//
//   BLMOVE whose destination is on another shard: the element is popped under the
//   claim, then the fiber pushes it to the destination under the destination's lock.
//   Between the two hops the element is in neither list (a few microseconds); a
//   destination that became another type meanwhile gets the element put back at the
//   source's end it came from, and the client gets WRONGTYPE.
//
// Inside a transaction or a script, a write does not serve the key's waiters: the key
// is held (ReadyHolds below) and its waiters are served once the whole transaction or
// script is done, as Redis serves blocked clients only after the call (EXEC, EVAL)
// returns. So a transaction's own RPUSH then LPOP pops what it pushed, and the clients
// it wakes see its final state. It also keeps the replication stream in order: a
// waiter's effects (a pop, a BLMOVE's push to a key the transaction does not hold) are
// numbered after the transaction's one record, never inside it while commands of other
// clients on those keys are numbered in between.
//   - A transaction on one shard, or a script: its keys are served at the end of its
//     step, after its record is appended (Worker::ServeHeldReady).
//   - A transaction across shards: each shard's held keys are served in the step that
//     releases its locks there, after the transaction's record went out. Its nested
//     commands' steps hold into the same ReadyHolds (FiberOrigin::ready_holds).
//   - A script across shards: its calls on other shards hold into its ReadyHolds too;
//     they are served there by a synchronous hop once its record went out, while it
//     still holds those shards.
//
// Thread-safety: BlockedClient::state is atomic; the other fields are written by the
// origin before registration and by the single winner of kServed before it posts the
// wake-up, and read by the origin after it resumes. BlockingQueues is owned by one
// shard's thread.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strata {

class Worker;

struct BlockedClient {
  enum State : int { kWaiting = 0, kServed = 1, kCancelled = 2 };
  // What a key holds for this waiter (Check, on the key's shard).
  enum class Readiness { kOtherType, kEmpty, kReady };

  virtual ~BlockedClient() = default;
  // On the key's shard: whether `key` (in db) holds elements of the type this waiter
  // takes. kOtherType keeps the waiter in place and serves the next one.
  virtual Readiness Check(Worker& w, std::string_view key) = 0;
  // On the key's shard, once this waiter is claimed (state kServed): takes its elements
  // from `key` into the waiter. REQUIRES: Check() just returned kReady.
  virtual void Take(Worker& w, std::string_view key) = 0;

  std::atomic<int> state{kWaiting};
  uint32_t origin = 0;
  uint32_t db = 0;
  std::vector<std::string> keys;
  int64_t deadline_ms = 0;         // 0 = wait forever
  std::string served_key;          // set by the serving shard before Take
  std::coroutine_handle<> handle;  // the fiber, resumed on `origin`
  // CLIENT UNBLOCK ... ERROR cancelled the wait: the command answers kUnblockedError
  // rather than as its timeout would. Written and read on `origin` only, after the
  // claim and before the fiber resumes there.
  bool unblock_error = false;
};

inline constexpr const char* kUnblockedError = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

// Suspends a blocking command's fiber until its BlockedClient is served or cancelled.
// Does not suspend when that already happened while the fiber was busy registering.
class BlockAwait {
 public:
  explicit BlockAwait(BlockedClient* c) : c_(c) {}
  bool await_ready() const {
    return c_->state.load(std::memory_order_acquire) != BlockedClient::kWaiting;
  }
  void await_suspend(std::coroutine_handle<> h) { c_->handle = h; }
  void await_resume() const {}

 private:
  BlockedClient* c_;
};

// Steps every blocking fiber takes on the shards of its keys (run through RunOn):
// JoinQueues on the shards the fiber locked, then, after waking, LeaveQueues on
// KeyShards(c) (a shard that served the client already dropped it from that key's queue).
void JoinQueues(Worker& w, const std::shared_ptr<BlockedClient>& c, uint32_t shard_count);
void LeaveQueues(Worker& w, const BlockedClient& c, uint32_t shard_count);
std::vector<uint32_t> KeyShards(const BlockedClient& c, uint32_t shard_count);

// Keys given elements inside a transaction or a script, per shard: each shard's thread
// writes only its own list (SignalKeyReady while a HoldReadyScope names this object),
// and serves it (Worker::ServeHeldReady) when the transaction or script is done.
struct ReadyHolds {
  explicit ReadyHolds(uint32_t shards) : per_shard(shards) {}
  std::vector<std::vector<std::pair<uint32_t, std::string>>> per_shard;  // (db, key)
};

// Where this thread's SignalKeyReady holds keys instead of serving them; null: serve now.
inline thread_local ReadyHolds* t_ready_holds = nullptr;

// While it lives, this thread holds ready keys in `h`; a null `h` leaves things as they
// are (a step of a fiber that is not part of a transaction or script).
class HoldReadyScope {
 public:
  explicit HoldReadyScope(ReadyHolds* h) : saved_(t_ready_holds) {
    if (h != nullptr) t_ready_holds = h;
  }
  ~HoldReadyScope() { t_ready_holds = saved_; }
  HoldReadyScope(const HoldReadyScope&) = delete;
  HoldReadyScope& operator=(const HoldReadyScope&) = delete;

 private:
  ReadyHolds* saved_;
};

// One shard's queues of blocked clients, per (db, key).
class BlockingQueues {
 public:
  void Add(uint32_t db, std::string_view key, std::shared_ptr<BlockedClient> c);
  void Remove(uint32_t db, std::string_view key, const BlockedClient* c);
  // Serves waiters of a key that just received elements or members (see above).
  void Serve(Worker& w, uint32_t db, std::string_view key);
  size_t waiting_keys() const { return queues_.size(); }

 private:
  static std::string QueueKey(uint32_t db, std::string_view key);
  std::unordered_map<std::string, std::deque<std::shared_ptr<BlockedClient>>> queues_;
};

}  // namespace strata
