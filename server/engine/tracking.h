// Client-side caching (CLIENT TRACKING): which clients may hold which keys in a local
// cache, and the invalidation messages that tell them a key changed - Redis 7's
// behaviour, spread over the shards.
//
// Default mode. A read-only command of a tracking client (with OPTIN only right after
// CLIENT CACHING yes, with OPTOUT unless right after CLIENT CACHING no) remembers its
// keys on the shard that owns them, in the same step on that shard that reads them, so
// nothing can change a key between its read and its registration. The client's worker
// decides (Client::TrackModeFor) and the command's path carries the decision: a
// single-shard command remembers after its shard function (locally, in a remote batch,
// or queued behind a lock), a fiber's steps through FiberOrigin (task.h, hops.h), EXEC
// per call, and a script per read-only call it makes (ExecScope). Each shard's
// TrackingTable maps a key name, whatever its database (as in Redis), to the clients
// that read it.
//
// A change. Every change to a key reaches NotifyKeyspaceEvent (notify.h) with the key's
// name, on the key's shard: while any client tracks, the notification gate is open for
// every change class (notify_flags.h), and the slow path hands the key to the shard's
// TrackingTable. The table takes the key's entry out and queues one invalidation per
// client for the client's worker; each BCAST prefix that matches queues one per
// (client, prefix). At the end of the loop turn the queue leaves with the outbox, before
// the turn's replies are written: once a write has replied, its invalidations are in the
// rings, and a tracking client's worker delivers them before it runs that client's next
// command (Worker::DeliverPendingMessages), as Pub/Sub messages.
//
// Delivery, on the client's worker. The client is looked up by id; gone, tracking off,
// or (for a default-mode entry) now in BCAST mode: dropped. NOLOOP drops the client's
// own changes. Without REDIRECT a RESP3 client gets `>2 invalidate [keys]`, a RESP2 one
// nothing. With REDIRECT the message goes on to the target's worker, which writes it as a
// push (RESP3) or as a message on __redis__:invalidate (RESP2, when it has
// subscriptions); a target that is gone answers back and a RESP3 tracker gets
// `tracking-redir-broken`. Default-mode keys travel one per message, BCAST keys one
// message per (client, prefix) per batch.
// FLUSHDB/FLUSHALL: each shard empties its table and each worker sends the null
// invalidation to every one of its tracking clients (as Redis does, whatever they track;
// the null is written in the tracker's protocol).
// tracking-table-max-keys: the keys of all tables together. Past it, each shard drops
// keys (invalidating them) down to its share of the limit, at most kTrimPerTurn per loop
// turn.
// Thread-safety: a TrackingTable and its queues belong to their worker's thread; the
// BcastRegistry is process-wide (a shared_mutex, with an atomic count for the fast path);
// ClientTracking belongs to its client's worker thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/base/notify_flags.h"
#include "server/engine/string_map.h"

namespace strata {

class Client;
class Worker;
struct CommandSpec;

// What CLIENT TRACKING set for one client.
struct ClientTracking {
  bool on = false;
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  bool caching_yes = false;  // CLIENT CACHING yes/no, for the next command
  bool caching_no = false;
  bool broken_redirect = false;
  uint64_t redirect = 0;  // a client id; 0: none
  uint32_t redirect_worker = 0;
  std::vector<std::string> prefixes;  // BCAST
};

// How a command's keys are tracked for the client that sent it.
enum class TrackMode : uint8_t {
  kNone = 0,
  kRead = 1,    // remember the command's keys
  kScript = 2,  // a script: remember the keys of the read-only commands it calls
};

// The command running on this thread: its client (NOLOOP), and for a script of a
// tracking client, whom its read-only calls are remembered for.
struct ExecOrigin {
  uint64_t client = 0;
  uint64_t script_tracker = 0;
  uint32_t script_worker = 0;
};
inline thread_local ExecOrigin t_exec;
struct FiberOrigin;

// Sets t_exec for one command (restored after: scripts nest commands). Only while the
// tracking gate is open (notify_flags.h): otherwise t_exec stays as it is between
// commands, empty, and a command pays one load and a branch.
class ExecScope {
 public:
  ExecScope(uint64_t client, TrackMode mode, uint32_t client_worker)
      : on_(g_notify_gate.load(std::memory_order_relaxed) & kNotifyTracking) {
    if (!on_) [[likely]]
      return;
    saved_ = t_exec;
    t_exec.client = client;
    t_exec.script_tracker = mode == TrackMode::kScript ? client : 0;
    t_exec.script_worker = client_worker;
  }
  // A fiber's step (hops.h): its command's origin, or nothing known.
  explicit ExecScope(const FiberOrigin* o);
  ~ExecScope() {
    if (on_) [[unlikely]]
      t_exec = saved_;
  }
  ExecScope(const ExecScope&) = delete;
  ExecScope& operator=(const ExecScope&) = delete;

 private:
  bool on_;
  ExecOrigin saved_;
};

// A tracking client's read that a fiber runs on several shards: whom for, and its keys.
struct TrackedRead {
  uint64_t client = 0;
  uint32_t worker = 0;
  std::vector<std::string> keys;
  // On w: remembers the keys that live on w's shard.
  void RememberOn(Worker& w) const;
};
std::shared_ptr<const TrackedRead> MakeTrackedRead(const CommandSpec* spec,
                                                   std::span<const std::string_view> args,
                                                   uint64_t client, uint32_t worker);

// BCAST registrations, process-wide: prefix -> clients.
class BcastRegistry {
 public:
  struct Ref {
    uint64_t client;
    uint32_t worker;
  };
  void Add(std::string_view prefix, uint64_t client, uint32_t worker);
  void Remove(const std::vector<std::string>& prefixes, uint64_t client);
  bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }
  // Calls fn(prefix, ref) for every registration whose prefix begins key. Cost: one
  // lookup per distinct prefix length.
  template <class Fn>
  void Match(std::string_view key, Fn&& fn) const {
    std::shared_lock<std::shared_mutex> l(mu_);
    for (size_t len : lengths_) {
      if (len > key.size()) break;
      auto it = by_prefix_.find(key.substr(0, len));
      if (it == by_prefix_.end()) continue;
      for (const Ref& r : it->second) fn(it->first, r);
    }
  }
  size_t distinct_prefixes() const;

 private:
  mutable std::shared_mutex mu_;
  StringMap<std::vector<Ref>> by_prefix_;
  std::vector<size_t> lengths_;  // distinct prefix lengths, increasing
  std::atomic<size_t> count_{0};
};

// One shard's tracked keys, and the invalidations it owes other workers' clients.
class TrackingTable {
 public:
  static constexpr size_t kTrimPerTurn = 1000;

  explicit TrackingTable(Worker& w) : worker_(w) {}
  ~TrackingTable();
  TrackingTable(const TrackingTable&) = delete;
  TrackingTable& operator=(const TrackingTable&) = delete;

  void Remember(std::string_view key, uint64_t client, uint32_t worker);
  // A single-shard command's keys (all on this shard).
  void RememberKeys(const CommandSpec* spec, std::span<const std::string_view> args,
                    uint64_t client, uint32_t worker);
  // A key changed on this shard, by the command of t_exec.client.
  void KeyChanged(std::string_view key);
  // FLUSHDB/FLUSHALL: forgets every key, and sends the null invalidation to this worker's
  // tracking clients.
  void OnFlush();
  // End of the loop turn: trims past tracking-table-max-keys and sends what is queued.
  void EndTurn();
  // Invalidations queued for this worker's own clients: delivered now.
  bool local_pending() const { return local_pending_; }
  void DeliverLocal();
  bool has_work() const { return pending_ || !keys_.empty() || holds_keys_; }

  // Exact, on the shard's thread.
  size_t live_keys() const { return keys_.size(); }
  size_t live_items() const { return items_; }
  // Heap bytes of the table (its entries and buckets), on the shard's thread: part of the
  // worker's used memory (INFO memory mem_tracking).
  size_t bytes() const { return bytes_ + keys_.bucket_count() * sizeof(void*); }
  // As of the shard's last loop turn, from any thread.
  size_t keys() const { return published_keys_.load(std::memory_order_relaxed); }
  size_t items() const { return published_items_.load(std::memory_order_relaxed); }

 private:
  struct Ref {
    uint64_t client;
    uint32_t worker;
  };
  void Queue(uint32_t worker, uint64_t client, uint64_t writer, std::string_view key,
             const std::string* prefix);
  // One entry's heap bytes: its hash node, the key and the client list.
  static size_t EntryBytes(const std::string& key, const std::vector<Ref>& refs);
  void Publish();

  Worker& worker_;
  StringMap<std::vector<Ref>> keys_;
  size_t items_ = 0;
  size_t bytes_ = 0;  // of the entries
  std::atomic<size_t> published_keys_{0};
  std::atomic<size_t> published_items_{0};
  bool pending_ = false;
  bool holds_keys_ = false;  // counted in Engine::tracking_gate_refs
  bool local_pending_ = false;
  std::vector<void*> out_;  // per destination worker: an InvalidationBatch, or null
};

// FLUSHDB/FLUSHALL's own client, after its reply (TrackingTable::OnFlush skips it).
void TrackingFlushNotice(Client& c);

// For the client commands (server/commands/tracking_family.cc), on the client's worker.
// Turns tracking off (CLIENT TRACKING off, RESET, a closing connection): BCAST prefixes
// are dropped, the keys it read stay in the tables until they change (as in Redis).
void TrackingOff(Client& c);
// Counts c as tracking (CLIENT TRACKING on, when it was off).
void TrackingOn(Client& c);

}  // namespace strata
