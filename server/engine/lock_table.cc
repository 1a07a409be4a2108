#include "server/engine/lock_table.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <unordered_set>
#include <vector>

#include "server/base/log.h"
#include "server/engine/repl_feed.h"
#include "server/engine/worker.h"

namespace strata {

LockTable::Key LockTable::LockKey(uint32_t db, std::string_view key) {
  return XXH3_64bits_withSeed(key.data(), key.size(), db);
}

bool LockTable::CanRun(uint32_t db, std::span<const std::string_view> keys, bool exclusive) const {
  if (whole_held_ || whole_queued_ > 0) return false;
  if (keys_.empty()) return true;
  for (std::string_view key : keys) {
    const KeyLock* l = keys_.find(LockKey(db, key));
    if (l == nullptr) continue;
    if (l->queued > 0 || Conflicts(*l, exclusive)) return false;
  }
  return true;
}

bool LockTable::CanRun(const Request& r) const {
  if (WholeOwnedBy(r.owner)) return true;
  // A transaction's own nested request over keys it holds runs now, ahead of anything
  // queued (a whole-shard request waiting for the transaction, say): making it wait
  // would deadlock the transaction with what waits for it.
  if (r.owner != 0 && !r.whole && !r.keys.empty()) {
    bool all_owned = true;
    for (Key key : r.keys) {
      const KeyLock* l = keys_.find(key);
      if (l == nullptr || !OwnedBy(*l, r.owner)) {
        all_owned = false;
        break;
      }
    }
    if (all_owned) return true;
  }
  if (whole_held_ || whole_queued_ > 0) return false;
  if (r.whole) return keys_.empty();
  for (Key key : r.keys) {
    const KeyLock* l = keys_.find(key);
    if (l == nullptr || OwnedBy(*l, r.owner)) continue;
    if (l->queued > 0 || Conflicts(*l, r.exclusive)) return false;
  }
  return true;
}

bool LockTable::AnyHeld() const {
  return keys_.Any([](Key, const KeyLock& l) { return l.exclusive || l.shared > 0; });
}

void LockTable::Acquire(const Request& r) {
  if (WholeOwnedBy(r.owner)) {  // nested under the owner's whole-shard hold
    if (r.whole) whole_nested_++;
    return;
  }
  if (r.whole) {
    whole_held_ = true;
    whole_owner_ = r.owner;
    whole_count_++;
    return;
  }
  for (Key key : r.keys) {
    KeyLock& k = keys_[key];
    if (OwnedBy(k, r.owner)) {
      k.nested++;
    } else if (r.exclusive) {
      k.exclusive = true;
      k.owner = r.owner;
    } else {
      k.shared++;
    }
  }
}

void LockTable::AcquireNested(const Request& r) {
  if (!WholeOwnedBy(r.owner)) {
    LogWarning("lock table: a synchronous request of owner %llx on a shard it does not hold",
               static_cast<unsigned long long>(r.owner));
    return;
  }
  Acquire(r);
}

void LockTable::Drop(Key key) {
  const KeyLock* l = keys_.find(key);
  if (l != nullptr && l->shared == 0 && !l->exclusive && l->queued == 0) keys_.erase(key);
}

namespace {
// A write fiber releasing a lock: its replication record is numbered now (repl_feed.h).
inline void BeforeRelease() {
  if (t_step_repl != nullptr) [[unlikely]]
    Worker::Current()->repl_feed().FiberReleasing(*t_step_repl);
}
}  // namespace

void LockTable::Release(const std::vector<Key>& keys, bool exclusive) {
  BeforeRelease();
  for (Key key : keys) {
    KeyLock* l = keys_.find(key);
    if (l == nullptr) continue;
    if (l->nested > 0) {
      l->nested--;
      continue;
    }
    if (exclusive) {
      l->exclusive = false;
      l->owner = 0;
    } else if (l->shared > 0) {
      l->shared--;
    }
    Drop(key);
  }
  ProcessQueue();
}

void LockTable::ReleaseWhole() {
  BeforeRelease();
  if (whole_nested_ > 0) {
    whole_nested_--;
    return;
  }
  if (!whole_held_) return;
  whole_held_ = false;
  whole_owner_ = 0;
  whole_count_--;
  ProcessQueue();
}

void LockTable::Enqueue(Request r) {
  if (r.whole) {
    whole_queued_++;
    whole_count_++;
  } else {
    for (Key key : r.keys) keys_[key].queued++;
  }
  queue_.push_back(std::move(r));
}

void LockTable::ProcessQueue() {
  // One pass admits, in FIFO order, every queued request that can run: a request waits
  // while a key it needs is held in a conflicting way or wanted by an earlier request
  // still waiting (`blocked`). A whole-shard request waits for every holder and every
  // earlier request, and blocks every later one (`all_blocked`) until it is released;
  // while one is held, nothing else is admitted. The admitted requests' tasks run after
  // the pass, in queue order, so a pass costs one look at each waiting request however
  // many are admitted. A task may release locks (a nested Release() only marks another
  // pass: the flag) or queue more requests; another pass then admits what became free.
  if (processing_) return;
  processing_ = true;
  bool progress = true;
  std::unordered_set<Key> blocked;
  std::vector<Task> admitted;
  std::deque<Request> waiting;
  while (progress && !queue_.empty()) {
    progress = false;
    blocked.clear();
    admitted.clear();
    waiting.clear();
    bool all_blocked = whole_held_;
    for (Request& r : queue_) {
      if (r.whole) {
        if (all_blocked || !waiting.empty() || AnyHeld()) {
          all_blocked = true;
          waiting.push_back(std::move(r));
          continue;
        }
        whole_queued_--;
        whole_count_--;
        if (r.hold) {
          whole_held_ = true;
          whole_owner_ = r.owner;
          whole_count_++;
        }
        all_blocked = true;  // later requests wait for the next pass at least
        admitted.push_back(r.on_admit);
        progress = true;
        continue;
      }
      bool ok = !all_blocked;
      for (Key key : r.keys) {
        if (!ok) break;
        if (blocked.count(key)) {
          ok = false;
          break;
        }
        const KeyLock* l = keys_.find(key);
        if (l != nullptr && !OwnedBy(*l, r.owner) && Conflicts(*l, r.exclusive)) {
          ok = false;
          break;
        }
      }
      if (!ok) {
        for (Key key : r.keys) blocked.insert(key);
        waiting.push_back(std::move(r));
        continue;
      }
      for (Key key : r.keys) keys_.find(key)->queued--;
      if (r.hold) Acquire(r);
      for (Key key : r.keys) Drop(key);
      admitted.push_back(r.on_admit);
      progress = true;
    }
    queue_.swap(waiting);
    for (const Task& t : admitted) t.Run();
  }
  processing_ = false;
}

std::string LockTable::DescribeExclusive() const {
  std::string out;
  char buf[64];
  if (whole_held_) {
    snprintf(buf, sizeof(buf), "whole by %llx", static_cast<unsigned long long>(whole_owner_));
    out = buf;
  }
  std::vector<uint64_t> owners;
  size_t n = 0;
  keys_.ForEach([&](Key, const KeyLock& l) {
    if (!l.exclusive) return;
    n++;
    if (std::find(owners.begin(), owners.end(), l.owner) == owners.end()) owners.push_back(l.owner);
  });
  if (n == 0) return out;
  if (!out.empty()) out += ", ";
  out += std::to_string(n) + " keys by";
  for (uint64_t o : owners) {
    snprintf(buf, sizeof(buf), " %llx", static_cast<unsigned long long>(o));
    out += buf;
  }
  out += ", " + std::to_string(queue_.size()) + " queued";
  return out;
}

}  // namespace strata
