#include "server/engine/blocking.h"

#include <algorithm>

#include "core/hash.h"
#include "server/engine/worker.h"

namespace strata {

std::string BlockingQueues::QueueKey(uint32_t db, std::string_view key) {
  std::string k(reinterpret_cast<const char*>(&db), sizeof(db));
  k.append(key);
  return k;
}

void JoinQueues(Worker& w, const std::shared_ptr<BlockedClient>& c, uint32_t shard_count) {
  for (const std::string& k : c->keys) {
    if (ShardOfKey(k, shard_count) == w.index()) w.blocking().Add(c->db, k, c);
  }
}

void LeaveQueues(Worker& w, const BlockedClient& c, uint32_t shard_count) {
  for (const std::string& k : c.keys) {
    if (ShardOfKey(k, shard_count) == w.index()) w.blocking().Remove(c.db, k, &c);
  }
}

std::vector<uint32_t> KeyShards(const BlockedClient& c, uint32_t shard_count) {
  std::vector<uint32_t> shards;
  for (const std::string& k : c.keys) shards.push_back(ShardOfKey(k, shard_count));
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  return shards;
}

void BlockingQueues::Add(uint32_t db, std::string_view key, std::shared_ptr<BlockedClient> c) {
  queues_[QueueKey(db, key)].push_back(std::move(c));
}

void BlockingQueues::Remove(uint32_t db, std::string_view key, const BlockedClient* c) {
  auto it = queues_.find(QueueKey(db, key));
  if (it == queues_.end()) return;
  auto& q = it->second;
  for (auto i = q.begin(); i != q.end(); ++i) {
    if (i->get() == c) {
      q.erase(i);
      break;
    }
  }
  if (q.empty()) queues_.erase(it);
}

namespace {

// Resumes the blocked fiber on its own worker. The fiber may be suspended in another
// awaitable at that moment (registering or releasing locks); it then sees its state
// when it reaches the blocking wait and does not suspend there.
void WakeOnOrigin(Worker& w, std::shared_ptr<BlockedClient> c) {
  uint32_t origin = c->origin;
  w.Post(origin, MakeTask([c = std::move(c)] {
           if (c->handle) {
             std::coroutine_handle<> h = c->handle;
             c->handle = nullptr;
             h.resume();
           }
         }));
}

}  // namespace

void BlockingQueues::Serve(Worker& w, uint32_t db, std::string_view key) {
  auto it = queues_.find(QueueKey(db, key));
  if (it == queues_.end()) return;
  auto& q = it->second;
  size_t i = 0;  // waiters before i wait for the type the key does not hold
  while (i < q.size()) {
    std::shared_ptr<BlockedClient> c = q[i];
    if (c->state.load(std::memory_order_acquire) != BlockedClient::kWaiting) {
      q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    BlockedClient::Readiness ready = c->Check(w, key);
    if (ready == BlockedClient::Readiness::kOtherType) {
      i++;
      continue;
    }
    if (ready == BlockedClient::Readiness::kEmpty) break;
    int expected = BlockedClient::kWaiting;
    if (!c->state.compare_exchange_strong(expected, BlockedClient::kServed,
                                          std::memory_order_acq_rel)) {
      q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
    c->served_key.assign(key);
    c->Take(w, key);
    WakeOnOrigin(w, std::move(c));
  }
  if (q.empty()) queues_.erase(it);
}

}  // namespace strata
