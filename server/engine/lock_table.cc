#include "server/engine/lock_table.h"

#include <xxhash.h>

#include <unordered_set>
#include <vector>

namespace strata {

LockTable::Key LockTable::LockKey(uint32_t db, std::string_view key) {
  return XXH3_64bits_withSeed(key.data(), key.size(), db);
}

bool LockTable::CanRun(uint32_t db, std::span<const std::string_view> keys, bool exclusive) const {
  if (keys_.empty()) return true;
  for (std::string_view key : keys) {
    auto it = keys_.find(LockKey(db, key));
    if (it == keys_.end()) continue;
    if (it->second.queued > 0 || Conflicts(it->second, exclusive)) return false;
  }
  return true;
}

bool LockTable::CanRun(const Request& r) const {
  for (Key key : r.keys) {
    auto it = keys_.find(key);
    if (it == keys_.end()) continue;
    if (it->second.queued > 0 || Conflicts(it->second, r.exclusive)) return false;
  }
  return true;
}

void LockTable::Acquire(const Request& r) {
  for (Key key : r.keys) {
    KeyLock& k = keys_[key];
    if (r.exclusive) {
      k.exclusive = true;
    } else {
      k.shared++;
    }
  }
}

void LockTable::Drop(Key key) {
  auto it = keys_.find(key);
  if (it != keys_.end() && it->second.shared == 0 && !it->second.exclusive &&
      it->second.queued == 0)
    keys_.erase(it);
}

void LockTable::Release(const std::vector<Key>& keys, bool exclusive) {
  for (Key key : keys) {
    auto it = keys_.find(key);
    if (it == keys_.end()) continue;
    if (exclusive) {
      it->second.exclusive = false;
    } else if (it->second.shared > 0) {
      it->second.shared--;
    }
    Drop(key);
  }
  ProcessQueue();
}

void LockTable::Enqueue(Request r) {
  for (Key key : r.keys) keys_[key].queued++;
  queue_.push_back(std::move(r));
}

void LockTable::ProcessQueue() {
  // One pass admits, in FIFO order, every queued request that can run: a request waits
  // while a key it needs is held in a conflicting way or wanted by an earlier request
  // still waiting (`blocked`). The admitted requests' tasks run after the pass, in queue
  // order, so a pass costs one look at each waiting request however many are admitted.
  // A task may release locks (a nested Release() only marks another pass: the flag) or
  // queue more requests; another pass then admits what became free.
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
    for (Request& r : queue_) {
      bool ok = true;
      for (Key key : r.keys) {
        if (blocked.count(key)) {
          ok = false;
          break;
        }
        auto it = keys_.find(key);
        if (it != keys_.end() && Conflicts(it->second, r.exclusive)) {
          ok = false;
          break;
        }
      }
      if (!ok) {
        for (Key key : r.keys) blocked.insert(key);
        waiting.push_back(std::move(r));
        continue;
      }
      for (Key key : r.keys) keys_.find(key)->second.queued--;
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

}  // namespace strata
