// LockTable: one shard's intent locks for commands that span shards.
//
// How atomicity across shards works (see docs/ARCHITECTURE.md, "Multi-key commands")
//   A command whose keys live on several shards is coordinated by a fiber on the
//   client's thread. It takes locks on its keys on all its shards at once where each
//   can grant them without waiting (try_lock_all.h), else shard by shard in increasing
//   shard order (so two such commands can never wait on each other in a cycle), then
//   runs its steps on the shards, then releases. Reads take shared locks, writes exclusive.
//   While a key is locked, any conflicting command on that key - including plain
//   single-key commands - waits in this shard's FIFO queue, so no client can observe
//   a half-applied MSET or RENAME.
//   The common case costs one branch: empty() is checked before anything else, and a
//   command on a shard with no locks and no queue runs at once.
//
// Transactions (MULTI/EXEC, transaction.h) lock as an owner. A request carries the
// owner's id (0: none): a key already held exclusively by that owner is granted to it
// again at once, counted as a nested hold, so that a multi-key command run inside the
// transaction (an MSET across shards, itself a fiber taking locks) proceeds under the
// transaction's locks instead of queueing behind them; its Release then only drops the
// nested hold. A whole-shard request (`whole`) conflicts with every key: it waits for
// the shard's holders to leave and, while held, every other command on the shard
// waits - except the owner's own nested requests. Transactions with whole-keyspace
// commands (FLUSHDB, KEYS, DBSIZE...) take it on every shard, in shard order like keys.
//
// Keys are scoped by database: the same name in two databases is two locks. A lock is
// named by a 64-bit hash of (database, key), not the key itself: locking costs no copy
// of the key and a lookup compares one integer. Two keys whose hashes collide share a
// lock; that can only make a command wait for an unrelated one (about once in 2^64
// pairs), never let two conflicting ones run together.
// Thread-safety: owned by its shard's thread.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/engine/key_lock_map.h"
#include "server/engine/task.h"

namespace strata {

class LockTable {
 public:
  using Key = uint64_t;  // LockKey(db, key)

  struct Request {
    std::vector<Key> keys;  // LockKey of each key
    bool exclusive = true;
    bool hold = true;  // take the locks on admission (false: just run on_admit)
    Task on_admit;     // runs on this shard's thread once the keys are free
    // The keys by name (views that live as long as the request), for the spill tier:
    // once a fiber's locks are taken on a shard, the cold values among them are read
    // back before it goes on (hops.h LockOn). Empty: none checked.
    uint32_t db = 0;
    std::vector<std::string_view> names;
    bool whole = false;  // the whole shard (keys unused)
    uint64_t owner = 0;  // a transaction's id (Client::txn_owner), or 0
    // A script across shards: once granted, the shard polls for its hops awhile
    // (Worker::PollAwhile) instead of sleeping.
    bool then_hops = false;
  };

  static Key LockKey(uint32_t db, std::string_view key);

  bool empty() const { return keys_.empty() && whole_count_ == 0; }
  // True when an operation on these keys can run now: no conflicting holder and no
  // earlier request queued on any of them.
  bool CanRun(uint32_t db, std::span<const std::string_view> keys, bool exclusive) const;
  bool CanRun(const Request& r) const;
  void Acquire(const Request& r);
  // A request of an owner that holds this shard whole (a script spanning shards, and the
  // multi-shard commands it calls: sync_hop.h), granted at once as a nested hold. A
  // request from anyone else is a bug: it is logged and not granted, and its release
  // will find nothing to drop.
  void AcquireNested(const Request& r);  // Releases a held request's locks and admits whatever can
                                         // now run. A key held as a
  // nested hold (see above) drops that hold only.
  void Release(const std::vector<Key>& keys, bool exclusive);
  // Releases a held whole-shard request (a nested one: drops only that).
  void ReleaseWhole();
  bool whole_held() const { return whole_held_; }
  // Queues a request that cannot run now. It is admitted in FIFO order.
  void Enqueue(Request r);
  size_t queued() const { return queue_.size(); }
  // True while some command holds an exclusive lock here, i.e. a multi-shard write may
  // be half applied (a snapshot's cut waits for none; O(locked keys)).
  // Whether anyone but `except` (an owner, or 0: nobody excepted) holds something
  // exclusively.
  // What holds this shard exclusively, for the log: "whole by <owner>", "<n> keys by
  // <owners>"; empty when nothing does.
  std::string DescribeExclusive() const;
  // True while a command other than `owner`'s (a transaction's id, or 0) holds or waits
  // for a lock here: what a reload waits out before it saves. What waits behind the
  // owner's own locks does not count (it cannot run before the owner is done).
  bool BusyExcept(uint64_t owner) const {
    bool whole_mine = WholeOwnedBy(owner);
    if (whole_mine) return false;
    if (whole_held_ || whole_queued_ > 0) return true;
    return keys_.Any([owner](Key, const KeyLock& l) {
      return !OwnedBy(l, owner) && (l.exclusive || l.shared > 0 || l.queued > 0);
    });
  }
  bool AnyExclusive(uint64_t except = 0) const {
    if (whole_held_ && !WholeOwnedBy(except)) return true;
    return keys_.Any(
        [except](Key, const KeyLock& l) { return l.exclusive && !OwnedBy(l, except); });
  }

 private:
  struct KeyLock {
    uint32_t shared = 0;
    bool exclusive = false;
    uint32_t queued = 0;
    uint32_t nested = 0;  // the exclusive owner's nested holds
    uint64_t owner = 0;   // of the exclusive hold
  };
  bool Conflicts(const KeyLock& k, bool exclusive) const {
    return k.exclusive || (exclusive && k.shared > 0);
  }
  static bool OwnedBy(const KeyLock& k, uint64_t owner) {
    return owner != 0 && k.exclusive && k.owner == owner;
  }
  bool WholeOwnedBy(uint64_t owner) const {
    return owner != 0 && whole_held_ && whole_owner_ == owner;
  }
  bool AnyHeld() const;
  void Drop(Key key);
  void ProcessQueue();

  KeyLockMap<KeyLock> keys_;  // locked and waited-for keys (key_lock_map.h)
  std::deque<Request> queue_;
  bool processing_ = false;
  bool whole_held_ = false;
  uint64_t whole_owner_ = 0;
  uint32_t whole_queued_ = 0;
  uint32_t whole_count_ = 0;   // held (0 or 1) + queued whole-shard requests: empty()'s test
  uint32_t whole_nested_ = 0;  // the whole-shard owner's nested whole-shard holds
};

}  // namespace strata
