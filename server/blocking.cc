#include "server/blocking.h"

#include <algorithm>

#include "core/hash.h"
#include "core/keyspace.h"
#include "server/list_ops.h"
#include "server/server.h"
#include "server/worker.h"
#include "server/zset_ops.h"

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
  Keyspace& ks = w.keyspace();
  uint32_t shards = w.server().shard_count();
  auto& q = it->second;
  size_t i = 0;  // waiters before i wait for the type the key does not hold
  while (i < q.size()) {
    std::shared_ptr<BlockedClient> c = q[i];
    if (c->state.load(std::memory_order_acquire) != BlockedClient::kWaiting) {
      q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    bool zset = c->zset;
    bool wrong = false;
    int64_t len =
        zset ? OpZCard(ks, db, key, w.now_ms(), &wrong) : OpLength(ks, db, key, w.now_ms(), &wrong);
    if (wrong) {
      i++;
      continue;
    }
    if (len == 0) break;
    int expected = BlockedClient::kWaiting;
    if (!c->state.compare_exchange_strong(expected, BlockedClient::kServed,
                                          std::memory_order_acq_rel)) {
      q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
    if (zset) {
      ZPopped got = OpZPop(ks, db, key, c->zset_max, c->count, w.now_ms(), &wrong);
      for (auto& [m, s] : got) {
        c->values.push_back(std::move(m));
        c->scores.push_back(s);
      }
      c->served_key.assign(key);
      WakeOnOrigin(w, std::move(c));
      continue;
    }
    size_t n = c->kind == BlockedClient::Kind::kMPop ? c->count : 1;
    c->values = OpPop(ks, db, key, c->left, n, w.now_ms(), &wrong);
    c->served_key.assign(key);
    if (c->kind == BlockedClient::Kind::kMove && ShardOfKey(c->destination, shards) == w.index()) {
      // Both lists on this shard: the move is completed here, atomically.
      OpLength(ks, db, c->destination, w.now_ms(), &wrong);
      std::string_view v = c->values[0];
      if (wrong) {
        // Destination changed type since the client blocked: put the element back.
        bool unused = false;
        OpPush(ks, db, key, c->left, std::span<const std::string_view>(&v, 1), false, w.now_ms(),
               &unused);
        c->wrong_type = true;
      } else {
        OpPush(ks, db, c->destination, c->to_left, std::span<const std::string_view>(&v, 1), false,
               w.now_ms(), &wrong);
        w.SignalKeyReady(db, c->destination);  // queued: served after this key
      }
      c->pushed = true;
    }
    WakeOnOrigin(w, std::move(c));
  }
  if (q.empty()) queues_.erase(it);
}

}  // namespace strata
