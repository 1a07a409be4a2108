#include "server/engine/tracking.h"

#include <algorithm>
#include <iterator>
#include <mutex>

#include "core/hash.h"
#include "server/base/config.h"
#include "server/base/heap_bytes.h"
#include "server/base/notify_flags.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/task.h"
#include "server/engine/worker.h"

namespace strata {

namespace {

// One invalidation owed to a client of another (or this) worker.
struct Invalidation {
  uint64_t client;
  uint64_t writer;  // the client whose command changed the key (NOLOOP); 0: none
  std::string key;
  std::string prefix;  // BCAST: the prefix matched
  bool bcast;
};

struct InvalidationBatch {
  std::vector<Invalidation> items;
};

// A tracker's message, on its way to the REDIRECT target's worker.
struct Forward {
  uint64_t target;
  uint64_t tracker;
  uint32_t tracker_worker;
  int tracker_resp;
  bool flush;
  std::vector<std::string> keys;
};

// The target of a redirect was not found: back to the tracker's worker.
struct Broken {
  uint64_t tracker;
  uint64_t target;
};

Client* FindClient(Worker& w, uint64_t id) {
  auto it = w.connections().find(id);
  return it == w.connections().end() || it->second->gone() ? nullptr : it->second;
}

void AppendBulk(std::string* out, std::string_view s) {
  out->push_back('$');
  out->append(std::to_string(s.size()));
  out->append("\r\n");
  out->append(s);
  out->append("\r\n");
}

// Writes the message to its receiver: a push in RESP3, a message on
// __redis__:invalidate in RESP2 while subscribed, else nothing. A flush's null is in the
// tracker's protocol (as Redis writes it).
template <class Keys>
void WriteInvalidation(Worker& w, Client& to, const Keys& keys, bool flush, int tracker_resp) {
  std::string out;
  if (to.resp == 3) {
    out = ">2\r\n$10\r\ninvalidate\r\n";
  } else if (to.subscribed()) {
    out = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
  } else {
    return;
  }
  if (flush) {
    out.append(tracker_resp == 3 ? "_\r\n" : "$-1\r\n");
  } else {
    out.push_back('*');
    out.append(std::to_string(std::size(keys)));
    out.append("\r\n");
    for (const auto& k : keys) AppendBulk(&out, k);
  }
  w.pubsub().Push(to, out);
}

void MarkBroken(Worker& w, Client& tracker, uint64_t target) {
  ClientTracking& t = tracker.tracking;
  if (!t.on || t.redirect != target) return;
  t.broken_redirect = true;
  if (tracker.resp != 3) return;
  std::string out = ">2\r\n$21\r\ntracking-redir-broken\r\n:";
  out.append(std::to_string(target));
  out.append("\r\n");
  w.pubsub().Push(tracker, out);
}

void DeliverBroken(void* p) {
  auto* b = static_cast<Broken*>(p);
  Worker& w = *Worker::Current();
  if (Client* c = FindClient(w, b->tracker); c != nullptr) MarkBroken(w, *c, b->target);
  delete b;
}

void DeliverForward(void* p) {
  auto* f = static_cast<Forward*>(p);
  Worker& w = *Worker::Current();
  if (Client* to = FindClient(w, f->target); to != nullptr) {
    WriteInvalidation(w, *to, f->keys, f->flush, f->tracker_resp);
  } else {
    w.Post(f->tracker_worker, Task{DeliverBroken, new Broken{f->tracker, f->target}});
  }
  delete f;
}

// Sends keys (or the flush's null) for a tracking client: to itself, or to its REDIRECT
// target.
template <class Keys>
void SendFor(Worker& w, Client& tracker, const Keys& keys, bool flush) {
  const ClientTracking& t = tracker.tracking;
  if (t.redirect == 0) {
    if (tracker.resp == 3) WriteInvalidation(w, tracker, keys, flush, tracker.resp);
    return;
  }
  if (t.redirect_worker == w.index()) {
    if (Client* to = FindClient(w, t.redirect); to != nullptr) {
      WriteInvalidation(w, *to, keys, flush, tracker.resp);
    } else {
      MarkBroken(w, tracker, t.redirect);
    }
    return;
  }
  auto* f = new Forward{t.redirect, tracker.id(), w.index(), tracker.resp, flush, {}};
  for (const auto& k : keys) f->keys.emplace_back(k);
  w.Post(t.redirect_worker, Task{DeliverForward, f});
}

void DeliverBatch(void* p) {
  auto* b = static_cast<InvalidationBatch*>(p);
  Worker& w = *Worker::Current();
  // BCAST: one message per (client, prefix) with its keys, in the order they changed.
  struct Group {
    uint64_t client;
    const std::string* prefix;
    std::vector<std::string_view> keys;
  };
  std::vector<Group> groups;
  for (const Invalidation& inv : b->items) {
    Client* c = FindClient(w, inv.client);
    if (c == nullptr) continue;
    const ClientTracking& t = c->tracking;
    if (!t.on || t.bcast != inv.bcast) continue;
    if (t.noloop && inv.writer == inv.client) continue;
    if (!inv.bcast) {
      std::string_view one[1] = {inv.key};
      SendFor(w, *c, one, false);
      continue;
    }
    Group* g = nullptr;
    for (Group& x : groups) {
      if (x.client == inv.client && *x.prefix == inv.prefix) g = &x;
    }
    if (g == nullptr) {
      groups.push_back(Group{inv.client, &inv.prefix, {}});
      g = &groups.back();
    }
    if (std::find(g->keys.begin(), g->keys.end(), inv.key) == g->keys.end())
      g->keys.push_back(inv.key);
  }
  for (const Group& g : groups) {
    if (Client* c = FindClient(w, g.client); c != nullptr) SendFor(w, *c, g.keys, false);
  }
  delete b;
}

}  // namespace

void TrackingFlushNotice(Client& c) {
  if (!c.tracking.on) return;
  std::vector<std::string_view> none;
  SendFor(c.worker(), c, none, true);
}

ExecScope::ExecScope(const FiberOrigin* o)
    : on_(g_notify_gate.load(std::memory_order_relaxed) & kNotifyTracking) {
  if (!on_) return;
  saved_ = t_exec;
  if (o == nullptr) {
    t_exec = ExecOrigin{};
    return;
  }
  t_exec.client = o->client;
  t_exec.script_tracker = 0;
  if (o->track_mode == static_cast<uint8_t>(TrackMode::kScript)) {
    t_exec.script_tracker = o->client;
    t_exec.script_worker = o->worker;
  }
}

// ---- Client

TrackMode Client::TrackModeFor(const CommandSpec* spec) const {
  const ClientTracking& t = tracking;
  if (!t.on || t.bcast) return TrackMode::kNone;
  if (t.optin && !t.caching_yes) return TrackMode::kNone;
  if (t.optout && t.caching_no) return TrackMode::kNone;
  // A script's own read-only flag (EVAL_RO, FCALL_RO) does not count: its calls do.
  if (spec->flags & kCmdScript) return TrackMode::kScript;
  if (spec->flags & kCmdReadOnly) return TrackMode::kRead;
  return TrackMode::kNone;
}

void TrackingOn(Client& c) {
  if (c.tracking.on) return;
  c.tracking.on = true;
  Engine& e = c.worker().engine();
  e.tracking_clients.fetch_add(1, std::memory_order_relaxed);
  e.tracking_gate_refs.fetch_add(1, std::memory_order_relaxed);
  SetTrackingGate(e.tracking_gate_refs);
}

void TrackingOff(Client& c) {
  if (!c.tracking.on) return;
  Engine& e = c.worker().engine();
  if (!c.tracking.prefixes.empty()) e.bcast().Remove(c.tracking.prefixes, c.id());
  c.tracking = ClientTracking{};
  e.tracking_clients.fetch_sub(1, std::memory_order_relaxed);
  e.tracking_gate_refs.fetch_sub(1, std::memory_order_relaxed);
  SetTrackingGate(e.tracking_gate_refs);
}

// ---- TrackedRead

std::shared_ptr<const TrackedRead> MakeTrackedRead(const CommandSpec* spec,
                                                   std::span<const std::string_view> args,
                                                   uint64_t client, uint32_t worker) {
  auto read = std::make_shared<TrackedRead>();
  read->client = client;
  read->worker = worker;
  std::vector<std::string_view> keys;
  spec->Keys(args, &keys);
  for (std::string_view k : keys) read->keys.emplace_back(k);
  return read;
}

void TrackedRead::RememberOn(Worker& w) const {
  uint32_t n = w.engine().shard_count();
  for (const std::string& k : keys) {
    if (ShardOfKey(k, n) == w.index()) w.tracking().Remember(k, client, worker);
  }
}

// ---- BcastRegistry

void BcastRegistry::Add(std::string_view prefix, uint64_t client, uint32_t worker) {
  std::unique_lock<std::shared_mutex> l(mu_);
  auto it = by_prefix_.find(prefix);
  if (it == by_prefix_.end()) {
    it = by_prefix_.emplace(std::string(prefix), std::vector<Ref>{}).first;
    auto pos = std::lower_bound(lengths_.begin(), lengths_.end(), prefix.size());
    if (pos == lengths_.end() || *pos != prefix.size()) lengths_.insert(pos, prefix.size());
  }
  for (const Ref& r : it->second) {
    if (r.client == client) return;
  }
  it->second.push_back(Ref{client, worker});
  count_.fetch_add(1, std::memory_order_relaxed);
}

void BcastRegistry::Remove(const std::vector<std::string>& prefixes, uint64_t client) {
  std::unique_lock<std::shared_mutex> l(mu_);
  for (const std::string& p : prefixes) {
    auto it = by_prefix_.find(p);
    if (it == by_prefix_.end()) continue;
    auto& refs = it->second;
    for (size_t i = 0; i < refs.size(); i++) {
      if (refs[i].client != client) continue;
      refs[i] = refs.back();
      refs.pop_back();
      count_.fetch_sub(1, std::memory_order_relaxed);
      break;
    }
    if (refs.empty()) by_prefix_.erase(it);
  }
  lengths_.clear();
  for (const auto& [prefix, refs] : by_prefix_) lengths_.push_back(prefix.size());
  std::sort(lengths_.begin(), lengths_.end());
  lengths_.erase(std::unique(lengths_.begin(), lengths_.end()), lengths_.end());
}

size_t BcastRegistry::distinct_prefixes() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  return by_prefix_.size();
}

// ---- TrackingTable

TrackingTable::~TrackingTable() {
  for (void* b : out_) delete static_cast<InvalidationBatch*>(b);
}

size_t TrackingTable::EntryBytes(const std::string& key, const std::vector<Ref>& refs) {
  // A node of the hash table: next pointer, cached hash, the pair.
  return 2 * sizeof(void*) + sizeof(std::string) + sizeof(std::vector<Ref>) + HeapBytes(key) +
         HeapBytes(refs);
}

void TrackingTable::Remember(std::string_view key, uint64_t client, uint32_t worker) {
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    if (!holds_keys_) [[unlikely]] {
      // The gate stays open while this table holds keys (Engine::tracking_gate_refs).
      holds_keys_ = true;
      Engine& e = worker_.engine();
      e.tracking_gate_refs.fetch_add(1, std::memory_order_relaxed);
      SetTrackingGate(e.tracking_gate_refs);
    }
    it = keys_.emplace(std::string(key), std::vector<Ref>{}).first;
  } else {
    for (const Ref& r : it->second) {
      if (r.client == client) return;
    }
    bytes_ -= EntryBytes(it->first, it->second);
  }
  it->second.push_back(Ref{client, worker});
  bytes_ += EntryBytes(it->first, it->second);
  items_++;
}

void TrackingTable::RememberKeys(const CommandSpec* spec, std::span<const std::string_view> args,
                                 uint64_t client, uint32_t worker) {
  thread_local std::vector<std::string_view> keys;
  keys.clear();
  spec->Keys(args, &keys);
  for (std::string_view k : keys) Remember(k, client, worker);
}

void TrackingTable::Queue(uint32_t worker, uint64_t client, uint64_t writer, std::string_view key,
                          const std::string* prefix) {
  if (out_.empty()) out_.resize(worker_.engine().shard_count(), nullptr);
  auto* b = static_cast<InvalidationBatch*>(out_[worker]);
  if (b == nullptr) {
    b = new InvalidationBatch();
    out_[worker] = b;
  }
  b->items.push_back(Invalidation{client, writer, std::string(key),
                                  prefix != nullptr ? *prefix : std::string(), prefix != nullptr});
  pending_ = true;
  if (worker == worker_.index()) local_pending_ = true;
}

void TrackingTable::KeyChanged(std::string_view key) {
  uint64_t writer = t_exec.client;
  if (!keys_.empty()) {
    auto it = keys_.find(key);
    if (it != keys_.end()) {
      for (const Ref& r : it->second) Queue(r.worker, r.client, writer, key, nullptr);
      items_ -= it->second.size();
      bytes_ -= EntryBytes(it->first, it->second);
      keys_.erase(it);
      pending_ = true;
    }
  }
  const BcastRegistry& reg = worker_.engine().bcast();
  if (!reg.empty()) {
    reg.Match(key, [&](const std::string& prefix, const BcastRegistry::Ref& r) {
      Queue(r.worker, r.client, writer, key, &prefix);
    });
  }
}

void TrackingTable::OnFlush() {
  StringMap<std::vector<Ref>>().swap(keys_);  // the buckets go too
  items_ = 0;
  bytes_ = 0;
  pending_ = true;
  // The flushing client is told after its reply (TrackingFlushNotice).
  std::vector<Client*> trackers;
  for (const auto& [id, c] : worker_.connections()) {
    if (c->tracking.on && !c->gone() && id != t_exec.client) trackers.push_back(c);
  }
  for (Client* c : trackers) {
    std::vector<std::string_view> none;
    SendFor(worker_, *c, none, true);
  }
}

void TrackingTable::DeliverLocal() {
  local_pending_ = false;
  if (out_.empty()) return;
  auto* b = static_cast<InvalidationBatch*>(out_[worker_.index()]);
  out_[worker_.index()] = nullptr;
  if (b != nullptr) DeliverBatch(b);
}

void TrackingTable::EndTurn() {
  int64_t max = worker_.engine().config().tracking_table_max_keys().load(std::memory_order_relaxed);
  if (max > 0 && !keys_.empty()) {
    Engine& e = worker_.engine();
    uint32_t n = e.shard_count();
    size_t total = keys_.size();
    for (uint32_t i = 0; i < n; i++) {
      if (i != worker_.index()) total += e.worker(i).tracking().keys();
    }
    if (total > static_cast<size_t>(max)) {
      // Down to this shard's share of the limit, a bounded number per turn.
      size_t share = static_cast<size_t>(max) / n;
      for (size_t dropped = 0; keys_.size() > share && dropped < kTrimPerTurn; dropped++) {
        auto it = keys_.begin();
        for (const Ref& r : it->second) Queue(r.worker, r.client, 0, it->first, nullptr);
        items_ -= it->second.size();
        bytes_ -= EntryBytes(it->first, it->second);
        keys_.erase(it);
      }
    }
  }
  published_keys_.store(keys_.size(), std::memory_order_relaxed);
  published_items_.store(items_, std::memory_order_relaxed);
  if (holds_keys_ && keys_.empty()) {
    holds_keys_ = false;
    Engine& e = worker_.engine();
    e.tracking_gate_refs.fetch_sub(1, std::memory_order_relaxed);
    SetTrackingGate(e.tracking_gate_refs);
  }
  if (!pending_) return;
  pending_ = false;
  local_pending_ = false;
  for (uint32_t d = 0; d < out_.size(); d++) {
    auto* b = static_cast<InvalidationBatch*>(out_[d]);
    if (b == nullptr) continue;
    out_[d] = nullptr;
    if (d == worker_.index()) {
      DeliverBatch(b);  // after this turn's replies are in the output, as Redis orders them
    } else {
      worker_.Post(d, Task{DeliverBatch, b});
    }
  }
}

}  // namespace strata
