#include "server/engine/watch_table.h"

#include <algorithm>

#include "core/hash.h"

namespace strata {

WatchTable::~WatchTable() {
  if (!keys_.empty()) ks_.set_watch_hook(nullptr);
}

bool WatchTable::Exists(uint32_t db, std::string_view key) const {
  return db < ks_.db_count() && ks_.table(db).Find(key, TableHash(key)) != nullptr;
}

void WatchTable::Watch(uint64_t owner, uint32_t db, std::string_view key, int64_t now_ms) {
  ks_.FlushWatchNotice();  // a change made before this WATCH is not its concern
  uint64_t slot = Slot(db, TableHash(key));
  auto [it, inserted] = keys_.try_emplace(slot);
  WatchedKey& wk = it->second;
  if (inserted) {
    wk.db = db;
    wk.key.assign(key);
  }
  for (const Watcher& w : wk.watchers) {
    if (w.owner == owner) return;
  }
  const Entry* e = db < ks_.db_count() ? ks_.table(db).Find(key, TableHash(key)) : nullptr;
  wk.watchers.push_back(Watcher{owner, e != nullptr && e->IsExpired(now_ms)});
  owners_[owner].keys.push_back(slot);
  if (keys_.size() == 1 && inserted) ks_.set_watch_hook(this);
}

void WatchTable::Unwatch(uint64_t owner) {
  auto it = owners_.find(owner);
  if (it == owners_.end()) return;
  for (uint64_t slot : it->second.keys) {
    auto k = keys_.find(slot);
    if (k == keys_.end()) continue;
    auto& ws = k->second.watchers;
    ws.erase(
        std::remove_if(ws.begin(), ws.end(), [&](const Watcher& w) { return w.owner == owner; }),
        ws.end());
    if (ws.empty()) keys_.erase(k);
  }
  owners_.erase(it);
  if (keys_.empty()) ks_.set_watch_hook(nullptr);
}

bool WatchTable::Changed(uint64_t owner, int64_t now_ms) {
  ks_.FlushWatchNotice();
  auto it = owners_.find(owner);
  if (it == owners_.end()) return false;
  if (it->second.dirty) return true;
  for (uint64_t slot : it->second.keys) {
    auto k = keys_.find(slot);
    if (k == keys_.end()) continue;
    const WatchedKey& wk = k->second;
    for (const Watcher& w : wk.watchers) {
      if (w.owner != owner || w.stale) continue;
      const Entry* e = ks_.table(wk.db).Find(wk.key, TableHash(wk.key));
      if (e != nullptr && e->IsExpired(now_ms)) return true;
    }
  }
  return false;
}

void WatchTable::Touch(WatchedKey& wk, bool deleted) {
  for (Watcher& w : wk.watchers) {
    if (w.stale && deleted) {
      w.stale = false;  // it was gone already; now it is absent
      continue;
    }
    owners_[w.owner].dirty = true;
  }
}

void WatchTable::KeyModified(uint32_t db, uint64_t table_hash, bool deleted) {
  auto it = keys_.find(Slot(db, table_hash));
  if (it != keys_.end()) Touch(it->second, deleted);
}

void WatchTable::BeforeFlush(uint32_t db) {
  for (auto& [slot, wk] : keys_) {
    if (wk.db == db && Exists(db, wk.key)) Touch(wk, true);
  }
}

void WatchTable::BeforeSwap(uint32_t a, uint32_t b) {
  for (auto& [slot, wk] : keys_) {
    if (wk.db != a && wk.db != b) continue;
    uint32_t other = wk.db == a ? b : a;
    bool here = Exists(wk.db, wk.key);
    bool there = Exists(other, wk.key);
    // What the key will be after the swap: the other database's. Nothing there: it is
    // deleted (a stale watcher sees no change); something there: it changed.
    if (here || there) Touch(wk, !there);
  }
}

}  // namespace strata
