#include "server/engine/pubsub.h"

#include <algorithm>
#include <mutex>

#include "core/glob.h"
#include "core/hash.h"
#include "server/base/heap_bytes.h"
#include "server/engine/client.h"
#include "server/engine/engine.h"
#include "server/engine/notify.h"
#include "server/engine/task.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

thread_local CapturedMessages* t_capture = nullptr;
thread_local uint64_t t_capture_tag = 0;
// The process's directory, for PubSubInUse (set when the engine creates it).
std::atomic<PubSubDirectory*> g_directory{nullptr};

// A message on its way to other workers: one copy, shared by every destination.
struct PubSubMessage {
  std::atomic<uint32_t> refs{0};
  uint64_t seq = 0;  // publishing order across workers (DeliveryOrder)
  PubSubKind kind;
  std::string channel;
  std::string message;
  std::vector<std::string> patterns;
};

std::atomic<uint64_t> g_message_seq{0};

void DeliverTask(void* p) {
  auto* m = static_cast<PubSubMessage*>(p);
  Worker::Current()->pubsub().Deliver(m->kind, m->channel, m->message, m->patterns);
  if (m->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete m;
}

// The bytes of a hash-map node holding a name: the node, the string's heap block, and
// the bucket pointer.
size_t NodeBytes(const std::string& name, size_t value_bytes) {
  return 32 + value_bytes + HeapBytes(name) + sizeof(void*);
}

void AppendBulk(std::string* out, std::string_view s) {
  out->push_back('$');
  out->append(std::to_string(s.size()));
  out->append("\r\n", 2);
  out->append(s);
  out->append("\r\n", 2);
}

// message / smessage / pmessage, as RESP2 array or RESP3 push.
void EncodeMessage(std::string* out, int resp, PubSubKind kind, const std::string* pattern,
                   std::string_view channel, std::string_view message) {
  out->clear();
  out->push_back(resp == 3 ? '>' : '*');
  out->append(pattern != nullptr ? "4\r\n" : "3\r\n");
  if (pattern != nullptr) {
    out->append("$8\r\npmessage\r\n");
    AppendBulk(out, *pattern);
  } else if (kind == PubSubKind::kShard) {
    out->append("$8\r\nsmessage\r\n");
  } else {
    out->append("$7\r\nmessage\r\n");
  }
  AppendBulk(out, channel);
  AppendBulk(out, message);
}

}  // namespace

size_t ClientSubscriptions::Bytes() const {
  size_t n = sizeof(*this);
  for (const auto& m : of) {
    n += m.bucket_count() * sizeof(void*);
    for (const auto& [name, index] : m) n += 32 + HeapBytes(name);
  }
  return n;
}

// ---- PubSubDirectory

PubSubDirectory::PubSubDirectory(uint32_t workers) : workers_(workers) {
  for (auto& s : stripes_) s = std::make_unique<Stripe[]>(kStripes);
  g_directory.store(this, std::memory_order_relaxed);
}

PubSubDirectory::Stripe& PubSubDirectory::StripeOf(PubSubKind kind, std::string_view name) const {
  int k = kind == PubSubKind::kShard ? 1 : 0;
  return stripes_[k][TableHash(name) % kStripes];
}

size_t PubSubDirectory::EntryBytes(std::string_view name) {
  // Node, key heap block (when longer than the inline buffer), one worker count.
  return 64 + (name.size() > 15 ? name.size() + 1 : 0) + sizeof(std::pair<uint32_t, uint32_t>);
}

namespace {
void Bump(std::vector<std::pair<uint32_t, uint32_t>>* counts, uint32_t w, int delta) {
  for (size_t i = 0; i < counts->size(); i++) {
    if ((*counts)[i].first != w) continue;
    (*counts)[i].second += delta;
    if ((*counts)[i].second == 0) {
      (*counts)[i] = counts->back();
      counts->pop_back();
    }
    return;
  }
  if (delta > 0) counts->push_back({w, static_cast<uint32_t>(delta)});
}
}  // namespace

void PubSubDirectory::Add(PubSubKind kind, std::string_view name, uint32_t w) {
  int k = static_cast<int>(kind);
  if (kind == PubSubKind::kPattern) {
    std::unique_lock lock(patterns_mu_);
    auto it = pattern_index_.find(name);
    if (it != pattern_index_.end()) {
      Bump(&patterns_[it->second].counts, w, 1);
      return;
    }
    pattern_index_.emplace(std::string(name), patterns_.size());
    patterns_.push_back(Pattern{std::string(name), {{w, 1}}});
    counts_[k].fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(EntryBytes(name), std::memory_order_relaxed);
    return;
  }
  Stripe& s = StripeOf(kind, name);
  std::unique_lock lock(s.mu);
  auto it = s.names.find(name);
  if (it == s.names.end()) {
    s.names.emplace(std::string(name), Counts{{w, 1}});
    counts_[k].fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(EntryBytes(name), std::memory_order_relaxed);
    return;
  }
  Bump(&it->second, w, 1);
}

void PubSubDirectory::Remove(PubSubKind kind, std::string_view name, uint32_t w) {
  int k = static_cast<int>(kind);
  if (kind == PubSubKind::kPattern) {
    std::unique_lock lock(patterns_mu_);
    auto it = pattern_index_.find(name);
    if (it == pattern_index_.end()) return;
    size_t i = it->second;
    Bump(&patterns_[i].counts, w, -1);
    if (patterns_[i].counts.empty()) {
      // Swap-remove: the pattern moved into the hole learns its new place.
      bytes_.fetch_sub(EntryBytes(name), std::memory_order_relaxed);
      pattern_index_.erase(it);
      if (i + 1 != patterns_.size()) {
        patterns_[i] = std::move(patterns_.back());
        pattern_index_.find(patterns_[i].pattern)->second = i;
      }
      patterns_.pop_back();
      counts_[k].fetch_sub(1, std::memory_order_relaxed);
    }
    return;
  }
  Stripe& s = StripeOf(kind, name);
  std::unique_lock lock(s.mu);
  auto it = s.names.find(name);
  if (it == s.names.end()) return;
  Bump(&it->second, w, -1);
  if (it->second.empty()) {
    bytes_.fetch_sub(EntryBytes(name), std::memory_order_relaxed);
    s.names.erase(it);
    counts_[k].fetch_sub(1, std::memory_order_relaxed);
  }
}

void PubSubDirectory::Route(PubSubKind kind, std::string_view channel, PubSubRoute* r) const {
  r->Clear();
  auto add_worker = [r](uint32_t w) {
    if (std::find(r->workers.begin(), r->workers.end(), w) == r->workers.end()) {
      r->workers.push_back(w);
    }
  };
  {
    Stripe& s = StripeOf(kind, channel);
    std::shared_lock lock(s.mu);
    auto it = s.names.find(channel);
    if (it != s.names.end()) {
      for (auto [w, n] : it->second) {
        r->receivers += n;
        r->workers.push_back(w);
      }
    }
  }
  // Redis's matcher never matches an empty channel, not even with "*".
  if (kind != PubSubKind::kChannel || Count(PubSubKind::kPattern) == 0 || channel.empty()) return;
  std::shared_lock lock(patterns_mu_);
  for (const Pattern& p : patterns_) {
    if (!GlobMatch(p.pattern, channel)) continue;
    r->patterns.push_back(p.pattern);
    for (auto [w, n] : p.counts) {
      r->receivers += n;
      add_worker(w);
    }
  }
}

std::vector<std::string> PubSubDirectory::Names(PubSubKind kind,
                                                const std::string_view* pattern) const {
  std::vector<std::string> out;
  if (kind == PubSubKind::kPattern) {
    std::shared_lock lock(patterns_mu_);
    for (const Pattern& p : patterns_) out.push_back(p.pattern);
    return out;
  }
  int k = kind == PubSubKind::kShard ? 1 : 0;
  for (size_t i = 0; i < kStripes; i++) {
    Stripe& s = stripes_[k][i];
    std::shared_lock lock(s.mu);
    for (const auto& [name, counts] : s.names) {
      if (pattern == nullptr || (!name.empty() && GlobMatch(*pattern, name))) out.push_back(name);
    }
  }
  return out;
}

size_t PubSubDirectory::Subscribers(PubSubKind kind, std::string_view name) const {
  size_t n = 0;
  if (kind == PubSubKind::kPattern) {
    std::shared_lock lock(patterns_mu_);
    auto it = pattern_index_.find(name);
    if (it != pattern_index_.end()) {
      for (auto [w, c] : patterns_[it->second].counts) n += c;
    }
    return n;
  }
  Stripe& s = StripeOf(kind, name);
  std::shared_lock lock(s.mu);
  auto it = s.names.find(name);
  if (it != s.names.end()) {
    for (auto [w, c] : it->second) n += c;
  }
  return n;
}

// ---- WorkerPubSub

bool WorkerPubSub::Add(Client& c, PubSubKind kind, std::string_view name) {
  int k = static_cast<int>(kind);
  if (c.gone()) return false;  // closed while its transaction ran: nothing to deliver to
  if (c.subs == nullptr) c.subs = std::make_unique<ClientSubscriptions>();
  auto& mine = c.subs->of[k];
  if (mine.find(name) != mine.end()) return false;
  bool first = c.subs->total() == 0;
  auto it = subscribers_[k].find(name);
  if (it == subscribers_[k].end()) {
    it = subscribers_[k].emplace(std::string(name), std::vector<Client*>{}).first;
    bytes_ += NodeBytes(it->first, sizeof(std::vector<Client*>));
  }
  size_t cap = it->second.capacity();
  it->second.push_back(&c);
  bytes_ += (it->second.capacity() - cap) * sizeof(Client*);
  mine.emplace(std::string(name), static_cast<uint32_t>(it->second.size() - 1));
  // The directory last: a publish that finds this worker finds the client here.
  worker_.engine().pubsub().Add(kind, name, worker_.index());
  if (first) {
    clients_++;
    c.client_class = ClientClass::kPubSub;
  }
  return true;
}

bool WorkerPubSub::Remove(Client& c, PubSubKind kind, std::string_view name) {
  int k = static_cast<int>(kind);
  if (c.subs == nullptr) return false;
  auto& mine = c.subs->of[k];
  auto mit = mine.find(name);
  if (mit == mine.end()) return false;
  uint32_t index = mit->second;
  mine.erase(mit);
  auto it = subscribers_[k].find(name);
  std::vector<Client*>& list = it->second;
  // Swap-remove: the client moved into the hole learns its new index.
  if (index + 1 != list.size()) {
    Client* moved = list.back();
    list[index] = moved;
    moved->subs->of[k].find(name)->second = index;
  }
  list.pop_back();
  if (list.empty()) {
    bytes_ -=
        NodeBytes(it->first, sizeof(std::vector<Client*>)) + list.capacity() * sizeof(Client*);
    subscribers_[k].erase(it);
  }
  worker_.engine().pubsub().Remove(kind, name, worker_.index());
  if (c.subs->total() == 0) {
    clients_--;
    if (!c.monitor) c.client_class = ClientClass::kNormal;
  }
  return true;
}

void WorkerPubSub::Confirm(ReplyBuilder& rb, std::string_view verb, const std::string_view* name,
                           size_t count) {
  // Confirmations are pushes in RESP3, arrays in RESP2.
  std::string* out = rb.buffer();
  out->append(rb.resp() == 3 ? ">3\r\n" : "*3\r\n");
  AppendBulk(out, verb);
  if (name != nullptr) {
    AppendBulk(out, *name);
  } else {
    rb.Null();
  }
  rb.Integer(static_cast<int64_t>(count));
}

void WorkerPubSub::Subscribe(Client& c, PubSubKind kind, CmdArgs names, ReplyBuilder& rb) {
  std::string_view verb = kind == PubSubKind::kPattern ? "psubscribe"
                          : kind == PubSubKind::kShard ? "ssubscribe"
                                                       : "subscribe";
  for (size_t i = 1; i < names.size(); i++) {
    Add(c, kind, names[i]);
    size_t count = c.subs == nullptr            ? 0
                   : kind == PubSubKind::kShard ? c.subs->shard()
                                                : c.subs->normal();
    Confirm(rb, verb, &names[i], count);
  }
}

void WorkerPubSub::Unsubscribe(Client& c, PubSubKind kind, CmdArgs names, ReplyBuilder& rb) {
  std::string_view verb = kind == PubSubKind::kPattern ? "punsubscribe"
                          : kind == PubSubKind::kShard ? "sunsubscribe"
                                                       : "unsubscribe";
  auto count = [&] {
    if (c.subs == nullptr) return size_t{0};
    return kind == PubSubKind::kShard ? c.subs->shard() : c.subs->normal();
  };
  if (names.size() > 1) {
    for (size_t i = 1; i < names.size(); i++) {
      Remove(c, kind, names[i]);
      Confirm(rb, verb, &names[i], count());
    }
    return;
  }
  int k = static_cast<int>(kind);
  if (c.subs == nullptr || c.subs->of[k].empty()) {
    Confirm(rb, verb, nullptr, count());
    return;
  }
  std::vector<std::string> all;
  all.reserve(c.subs->of[k].size());
  for (const auto& [name, index] : c.subs->of[k]) all.push_back(name);
  for (const std::string& name : all) {
    Remove(c, kind, name);
    std::string_view v = name;
    Confirm(rb, verb, &v, count());
  }
}

void WorkerPubSub::UnsubscribeAll(Client& c) {
  if (c.subs == nullptr) return;
  for (int k = 0; k < kPubSubKinds; k++) {
    std::vector<std::string> all;
    for (const auto& [name, index] : c.subs->of[k]) all.push_back(name);
    for (const std::string& name : all) Remove(c, static_cast<PubSubKind>(k), name);
  }
  c.subs.reset();
}

void WorkerPubSub::Push(Client& c, std::string_view bytes) {
  if (c.Push(bytes)) [[unlikely]] {
    if (over_limit_.empty()) {
      worker_.Defer(Task{[](void* p) { static_cast<WorkerPubSub*>(p)->CheckLimitsLater(); }, this});
    }
    over_limit_.push_back(c.id());
  }
}

void WorkerPubSub::CheckLimitsLater() {
  std::vector<uint64_t> ids;
  ids.swap(over_limit_);
  const auto& conns = worker_.connections();
  for (uint64_t id : ids) {
    auto it = conns.find(id);
    if (it != conns.end()) it->second->EnforceOutputLimits();
  }
}

void WorkerPubSub::Deliver(PubSubKind kind, std::string_view channel, std::string_view message,
                           const std::vector<std::string>& patterns) {
  thread_local std::string enc[2];  // RESP2, RESP3
  bool encoded[2] = {false, false};
  auto bytes_for = [&](Client* c, const std::string* pattern) -> const std::string& {
    int v = c->resp == 3 ? 1 : 0;
    if (!encoded[v]) {
      EncodeMessage(&enc[v], c->resp, kind, pattern, channel, message);
      encoded[v] = true;
    }
    return enc[v];
  };
  auto it = subscribers_[static_cast<int>(kind)].find(channel);
  if (it != subscribers_[static_cast<int>(kind)].end()) {
    for (Client* c : it->second) Push(*c, bytes_for(c, nullptr));
  }
  for (const std::string& p : patterns) {
    auto pit = subscribers_[1].find(p);
    if (pit == subscribers_[1].end()) continue;
    encoded[0] = encoded[1] = false;
    for (Client* c : pit->second) Push(*c, bytes_for(c, &p));
  }
}

// ---- Publish

PublishCapture::PublishCapture(CapturedMessages* sink) : previous_(t_capture) {
  t_capture = sink;
  t_capture_tag = 0;
}
PublishCapture::~PublishCapture() { t_capture = previous_; }

void SetCaptureTag(uint64_t tag) { t_capture_tag = tag; }

void PublishCaptured(CapturedMessages* msgs) {
  if (msgs->empty()) return;
  std::stable_sort(
      msgs->begin(), msgs->end(),
      [](const CapturedMessage& a, const CapturedMessage& b) { return a.tag < b.tag; });
  for (const CapturedMessage& m : *msgs) Publish(m.kind, m.channel, m.message);
  msgs->clear();
}

bool PubSubInUse() {
  if (g_notify_flags.load(std::memory_order_relaxed) != 0) return true;
  PubSubDirectory* d = g_directory.load(std::memory_order_relaxed);
  return d != nullptr && (d->Count(PubSubKind::kChannel) + d->Count(PubSubKind::kPattern) +
                          d->Count(PubSubKind::kShard)) != 0;
}

size_t Publish(PubSubKind kind, std::string_view channel, std::string_view message) {
  Worker* w = Worker::Current();
  thread_local PubSubRoute route;
  w->engine().pubsub().Route(kind, channel, &route);
  if (route.receivers == 0) return 0;
  if (t_capture != nullptr) [[unlikely]] {
    t_capture->push_back(
        CapturedMessage{t_capture_tag, kind, std::string(channel), std::string(message)});
    return route.receivers;
  }
  uint32_t self = w->index();
  uint32_t remote = 0;
  for (uint32_t dest : route.workers) remote += dest != self;
  if (remote > 0) {
    auto* m = new PubSubMessage;
    m->refs.store(remote, std::memory_order_relaxed);
    m->seq = NextDeliverySeq();
    m->kind = kind;
    m->channel.assign(channel);
    m->message.assign(message);
    m->patterns = route.patterns;
    for (uint32_t dest : route.workers) {
      if (dest != self) w->PostMessage(dest, Task{DeliverTask, m});
    }
  }
  if (remote < route.workers.size()) w->pubsub().Deliver(kind, channel, message, route.patterns);
  return route.receivers;
}

// ---- Keyspace notifications (notify.h)

void PublishKeyspaceEvent(uint32_t cls, std::string_view event, std::string_view key, uint32_t db) {
  if ((g_notify_gate.load(std::memory_order_relaxed) & kNotifyTracking) && (cls & kNotifyAll))
      [[unlikely]] {
    // A change: client-side caching's invalidations (tracking.h).
    if (Worker* w = Worker::Current(); w != nullptr) w->tracking().KeyChanged(key);
  }
  uint32_t flags = g_notify_flags.load(std::memory_order_relaxed);
  if (!(flags & cls)) return;
  thread_local std::string channel;
  if (flags & kNotifyKeyspace) {
    channel.assign("__keyspace@");
    channel.append(std::to_string(db));
    channel.append("__:");
    channel.append(key);
    Publish(PubSubKind::kChannel, channel, event);
  }
  if (flags & kNotifyKeyevent) {
    channel.assign("__keyevent@");
    channel.append(std::to_string(db));
    channel.append("__:");
    channel.append(event);
    Publish(PubSubKind::kChannel, channel, key);
  }
}

// ---- Delivery order (worker.cc's DrainInbox)

bool IsPubSubDelivery(const Task& t) { return t.fn == DeliverTask; }
uint64_t NextDeliverySeq() { return g_message_seq.fetch_add(1, std::memory_order_relaxed); }
uint64_t PubSubDeliverySeq(const Task& t) { return static_cast<PubSubMessage*>(t.arg)->seq; }

}  // namespace strata
