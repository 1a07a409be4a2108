#include "server/engine/lock_table.h"

#include <unordered_set>

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
  // Admission may run commands that release nothing, but a nested Release() from an
  // admitted task is possible; the flag turns that into another pass of this loop.
  if (processing_) return;
  processing_ = true;
  bool progress = true;
  while (progress && !queue_.empty()) {
    progress = false;
    std::unordered_set<std::string_view> blocked;
    for (size_t i = 0; i < queue_.size();) {
      Request& r = queue_[i];
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
        for (const std::string& key : r.keys) blocked.insert(key);
        i++;
        continue;
      }
      Request admitted = std::move(r);
      queue_.erase(queue_.begin() + static_cast<long>(i));
      for (const std::string& key : admitted.keys) {
        auto it = keys_.find(std::string_view(key));
        it->second.queued--;
      }
      if (admitted.hold) Acquire(admitted);
      for (const std::string& key : admitted.keys) Drop(key);
      admitted.on_admit.Run();
      progress = true;
      // Iterators into queue_ may be stale after running a task: restart the pass.
      break;
    }
  }
  processing_ = false;
}

}  // namespace strata
