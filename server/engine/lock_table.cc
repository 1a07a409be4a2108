#include "server/engine/lock_table.h"

#include <unordered_set>
#include <vector>

namespace strata {

std::string LockTable::LockKey(uint32_t db, std::string_view key) {
  std::string k;
  k.reserve(key.size() + 4);
  k.append(reinterpret_cast<const char*>(&db), sizeof(db));
  k.append(key);
  return k;
}

bool LockTable::CanRun(uint32_t db, std::span<const std::string_view> keys, bool exclusive) const {
  if (keys_.empty()) return true;
  std::string buf;
  for (std::string_view key : keys) {
    buf.assign(reinterpret_cast<const char*>(&db), sizeof(db));
    buf.append(key);
    auto it = keys_.find(std::string_view(buf));
    if (it == keys_.end()) continue;
    if (it->second.queued > 0 || Conflicts(it->second, exclusive)) return false;
  }
  return true;
}

bool LockTable::CanRun(const Request& r) const {
  for (const std::string& key : r.keys) {
    auto it = keys_.find(std::string_view(key));
    if (it == keys_.end()) continue;
    if (it->second.queued > 0 || Conflicts(it->second, r.exclusive)) return false;
  }
  return true;
}

void LockTable::Acquire(const Request& r) {
  for (const std::string& key : r.keys) {
    KeyLock& k = keys_[key];
    if (r.exclusive) {
      k.exclusive = true;
    } else {
      k.shared++;
    }
  }
}

void LockTable::Drop(const std::string& key) {
  auto it = keys_.find(std::string_view(key));
  if (it != keys_.end() && it->second.shared == 0 && !it->second.exclusive &&
      it->second.queued == 0)
    keys_.erase(it);
}

void LockTable::Release(const std::vector<std::string>& keys, bool exclusive) {
  for (const std::string& key : keys) {
    auto it = keys_.find(std::string_view(key));
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
  for (const std::string& key : r.keys) keys_[key].queued++;
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
  std::unordered_set<std::string_view> blocked;
  std::vector<Task> admitted;
  std::deque<Request> waiting;
  while (progress && !queue_.empty()) {
    progress = false;
    blocked.clear();
    admitted.clear();
    waiting.clear();
    for (Request& r : queue_) {
      bool ok = true;
      for (const std::string& key : r.keys) {
        if (blocked.count(key)) {
          ok = false;
          break;
        }
        auto it = keys_.find(std::string_view(key));
        if (it != keys_.end() && Conflicts(it->second, r.exclusive)) {
          ok = false;
          break;
        }
      }
      if (!ok) {
        // Moving the request keeps its key strings where they are: the views stay valid.
        waiting.push_back(std::move(r));
        for (const std::string& key : waiting.back().keys) blocked.insert(key);
        continue;
      }
      for (const std::string& key : r.keys) {
        auto it = keys_.find(std::string_view(key));
        it->second.queued--;
      }
      if (r.hold) Acquire(r);
      for (const std::string& key : r.keys) Drop(key);
      admitted.push_back(r.on_admit);
      progress = true;
    }
    queue_.swap(waiting);
    for (const Task& t : admitted) t.Run();
  }
  processing_ = false;
}

}  // namespace strata
