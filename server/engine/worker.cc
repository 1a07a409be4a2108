#include "server/engine/worker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>

#include "server/base/config.h"
#include "server/base/cycle_clock.h"
#include "server/base/log.h"
#include "server/engine/client_connection.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/notify.h"
#include "server/engine/slowlog.h"
#include "server/net/event_loop.h"

namespace strata {
namespace {
thread_local Worker* t_current = nullptr;

std::string SockName(int fd, bool peer) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  int r = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len)
               : getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (r != 0) return "?:0";
  if (ss.ss_family == AF_UNIX) {
    // A Unix socket's client has no name of its own: both ends show the socket's path,
    // as Redis shows them ("/path:0").
    if (peer) return SockName(fd, false);
    auto* un = reinterpret_cast<sockaddr_un*>(&ss);
    return std::string(un->sun_path, strnlen(un->sun_path, sizeof(un->sun_path))) + ":0";
  }
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
    port = ntohs(a->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
  inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof(host));
  port = ntohs(a6->sin6_port);
  return std::string(host) + ":" + std::to_string(port);
}
// Redis's protected mode counts only these two addresses as local (not all of 127/8).
bool IsLoopbackPeer(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    return ntohl(a->sin_addr.s_addr) == INADDR_LOOPBACK;
  }
  if (ss.ss_family == AF_INET6) {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
    return IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
  }
  return ss.ss_family == AF_UNIX;
}

// Redis 7's reply to a client refused by protected mode, byte for byte.
constexpr char kProtectedModeError[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from "
    "the loopback interface. If you want to connect from external computers to Redis you "
    "may adopt one of the following solutions: 1) Just disable protected mode sending the "
    "command 'CONFIG SET protected-mode no' from the loopback interface by connecting to "
    "Redis from the same host the server is running, however MAKE SURE Redis is not "
    "publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change "
    "permanent. 2) Alternatively you can just disable the protected mode by editing the "
    "Redis configuration file, and setting the protected mode option to 'no', and then "
    "restarting the server. 3) If you started the server manually just for testing, "
    "restart it with the '--protected-mode no' option. 4) Setup a an authentication "
    "password for the default user. NOTE: You only need to do one of the above things in "
    "order for the server to start accepting connections from the outside.\r\n";

}  // namespace

int64_t WallClockMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int64_t WallClockUs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

Worker::Worker(Engine* engine, uint32_t index)
    : engine_(engine),
      index_(index),
      keyspace_(static_cast<uint32_t>(engine->config().Int("databases"))),
      repl_feed_(&engine->repl_log(), index),
      rng_state_(0x9E3779B97F4A7C15ull * (index + 1) ^ static_cast<uint64_t>(WallClockUs())) {
  uint32_t n = engine->shard_count();
  for (uint32_t i = 0; i < n; i++)
    inbox_.push_back(std::make_unique<SpscRing<Task>>(kRingCapacity));
  outbox_.resize(n);
  message_outbox_.resize(n);
  hop_slots_ = std::make_unique<std::atomic<const Task*>[]>(n);
  for (uint32_t i = 0; i < n; i++) hop_slots_[i].store(nullptr, std::memory_order_relaxed);
  open_batches_.assign(n, nullptr);
  stats_.commands.resize(CommandRegistry::Get().stat_count());
  routing_board_ = &engine->routing_board();
  // On a replica expired keys stay until the master's DEL (Keyspace::set_replica_flag).
  keyspace_.set_replica_flag(&engine->replication().replica_flag());
  // Cluster mode: database 0's keys by hash slot, kept from the first key loaded on.
  if (engine->process().cluster_mode()) keyspace_.EnableSlotIndex();
}

Worker::~Worker() {
  if (wake_fd_ >= 0) close(wake_fd_);
}

void Worker::TakeLatestRouting() { routing_ = routing_board_->Latest(&routing_version_); }

Worker* Worker::Current() { return t_current; }

size_t Worker::used_bytes() const {
  return keyspace_.used_bytes() + client_bytes_ + loop_->BufferBytes() + tier_bytes_ +
         pubsub_.bytes() + tracking_.bytes();
}

const char* Worker::backend_name() const { return loop_->name(); }

std::string Worker::backend_description() const { return loop_->Describe(); }

size_t Worker::RefreshIoBufferBytes() {
  loop_->RefreshBufferBytes();
  return loop_->BufferBytes();
}

bool Worker::Start(IoBackend backend, std::vector<int> listen_fds,
                   std::function<void(int)> on_accept, std::string* error, std::string* note) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    *error = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  std::promise<bool> ready;
  std::future<bool> ready_future = ready.get_future();
  thread_ = std::thread([&, this] {
    if (cpu_ >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu_, &set);
      pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    loop_ = CreateEventLoop(backend, error, note);
    if (!loop_) {
      ready.set_value(false);
      return;
    }
    loop_->SetBatchedSends(engine_->config().Bool("io-uring-batched-sends"));
    ApplyWakeupBatch(/*at_start=*/true);
    loop_->SetWakeFd(wake_fd_, [] {});
    for (int fd : listen_fds) loop_->AddListener(fd, on_accept);
    ready.set_value(true);
    Run();
  });
  if (!ready_future.get()) {
    thread_.join();
    return false;
  }
  return true;
}

void Worker::Join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::RequestStop() {
  stop_.store(true);
  uint64_t one = 1;
  ssize_t w = write(wake_fd_, &one, sizeof(one));
  (void)w;  // the loop also polls stop_ on its timer
}

void Worker::Wake() {
  if (sleeping_.load(std::memory_order_seq_cst) && sleeping_.exchange(false)) {
    uint64_t one = 1;
    ssize_t w = write(wake_fd_, &one, sizeof(one));
    (void)w;  // a full eventfd counter is already a pending wake-up
  }
}

void Worker::Post(uint32_t dest, Task t) {
  if (dest == index_) {
    deferred_.push_back(t);
    return;
  }
  outbox_[dest].push_back(t);
  outbox_pending_ = true;
}

void Worker::PollAfterHop() {
  int64_t us = engine_->config().Int("script-hop-poll-us");
  poll_until_us_ = us > 0 ? WallClockUs() + us : 0;
}

void Worker::PostHop(uint32_t dest, const Task* t) {
  Worker& d = engine_->worker(dest);
  d.hop_slots_[index_].store(t, std::memory_order_release);
  d.hops_pending_.store(true, std::memory_order_seq_cst);
  d.Wake();
}

bool Worker::RunHops() {
  if (!hops_pending_.load(std::memory_order_acquire)) return false;
  hops_pending_.store(false, std::memory_order_seq_cst);
  uint32_t n = static_cast<uint32_t>(inbox_.size());
  for (uint32_t src = 0; src < n; src++) {
    const Task* t = hop_slots_[src].exchange(nullptr, std::memory_order_acq_rel);
    if (t != nullptr) t->Run();
  }
  return true;
}

void Worker::PostExternal(Task t) {
  {
    std::lock_guard<std::mutex> l(external_mu_);
    external_.push_back(t);
  }
  WakeForExternal();
}

void Worker::WakeForExternal() {
  external_pending_.store(true, std::memory_order_seq_cst);
  sleeping_.store(true, std::memory_order_seq_cst);  // force the eventfd write below
  Wake();
}

void Worker::PostAdoption(int fd) {
  {
    std::lock_guard<std::mutex> l(external_mu_);
    adoptions_.push_back(fd);
  }
  WakeForExternal();
}

void Worker::AdoptPosted() {
  std::vector<int> fds;
  {
    std::lock_guard<std::mutex> l(external_mu_);
    fds.swap(adoptions_);
  }
  for (int fd : fds) AdoptConnection(fd);
}

void Worker::ServeWhileBusy() {
  if (serving_while_busy()) return;
  input_gates_ = static_cast<uint8_t>(input_gates_ | kGateBusyPass);
  int64_t clock = now_ms_;  // the script's time stays as it began
  AdoptPosted();
  loop_->PollNested();
  // The connections whose command is running (the script's caller) are mid-reply: they
  // stay marked for the turn's flush.
  std::vector<ClientConnection*> dirty;
  dirty.swap(dirty_);
  for (ClientConnection* c : dirty) {
    if (c->in_input()) {
      dirty_.push_back(c);
    } else {
      c->FlushOutput();
    }
  }
  now_ms_ = clock;
  input_gates_ = static_cast<uint8_t>(input_gates_ & ~kGateBusyPass);
}

RemoteBatch* Worker::OpenBatch(uint32_t dest) {
  RemoteBatch*& b = open_batches_[dest];
  if (free_batches_.empty()) {
    batch_pool_.push_back(std::make_unique<RemoteBatch>());
    free_batches_.push_back(batch_pool_.back().get());
  }
  b = free_batches_.back();
  free_batches_.pop_back();
  b->origin = index_;
  outbox_pending_ = true;
  return b;
}

void Worker::RecycleBatch(RemoteBatch* b) {
  // Keep the arenas' capacity for reuse, unless one batch was unusually large.
  if (b->args.capacity() > (1u << 20)) b->args.Release();
  if (b->replies.capacity() > (1u << 20)) std::string().swap(b->replies);
  b->Clear();
  free_batches_.push_back(b);
}

void Worker::FlushOutbox() {
  if (!outbox_pending_) return;
  for (uint32_t d = 0; d < open_batches_.size(); d++) {
    if (open_batches_[d] == nullptr) continue;
    outbox_[d].push_back(Task{ExecuteRemoteBatch, open_batches_[d]});
    open_batches_[d] = nullptr;
  }
  outbox_pending_ = false;
  // Messages first, to every destination (see PostMessage); while one waits for room,
  // nothing else goes out.
  bool messages_out = true;
  for (uint32_t d = 0; d < message_outbox_.size(); d++) {
    if (!PushTasks(d, &message_outbox_[d])) messages_out = false;
  }
  if (!messages_out) return;
  for (uint32_t d = 0; d < outbox_.size(); d++) PushTasks(d, &outbox_[d]);
}

bool Worker::PushTasks(uint32_t d, std::vector<Task>* q) {
  if (q->empty()) return true;
  Worker& dest = engine_->worker(d);
  SpscRing<Task>& ring = *dest.inbox_[index_];
  size_t pushed = 0;
  while (pushed < q->size() && ring.Push((*q)[pushed])) pushed++;
  bool all = pushed == q->size();
  if (!all) {
    q->erase(q->begin(), q->begin() + static_cast<long>(pushed));
    outbox_pending_ = true;  // the ring is full: retry next turn
  } else {
    q->clear();
  }
  if (pushed > 0) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    dest.Wake();
  }
  return all;
}

bool Worker::InboxEmpty() const {
  if (hops_pending_.load(std::memory_order_seq_cst)) return false;
  for (const auto& r : inbox_) {
    if (!r->Empty()) return false;
  }
  return true;
}

void Worker::DrainInbox() {
  if (external_pending_.load(std::memory_order_acquire)) {
    std::vector<Task> ext;
    std::vector<int> fds;
    {
      std::lock_guard<std::mutex> l(external_mu_);
      ext.swap(external_);
      fds.swap(adoptions_);
      external_pending_.store(false, std::memory_order_relaxed);
    }
    for (int fd : fds) AdoptConnection(fd);
    for (const Task& e : ext) e.Run();
  }
  RunHops();
  // Taken out of the members while they run (no task may find them in use).
  std::vector<Task> tasks, messages;
  tasks.swap(drained_);
  messages.swap(messages_);
  tasks.clear();
  messages.clear();
  if (!prefetched_.empty()) [[unlikely]] {
    // Taken from the rings earlier (DeliverPendingMessages): they go before later ones.
    tasks.swap(prefetched_);
  }
  PopInbox(&messages, &tasks);
  // Pub/Sub messages first (pubsub.h, "Causal order").
  if (!messages.empty()) [[unlikely]]
    RunInPublishOrder(messages);
  for (const Task& x : tasks) x.Run();
  drained_.swap(tasks);
  messages_.swap(messages);
}

void Worker::PopInbox(std::vector<Task>* messages, std::vector<Task>* tasks) {
  Task t;
  for (auto& r : inbox_) {
    // Bounded per call so that I/O keeps being served under a flood of messages.
    for (int i = 0; i < 4096 && r->Pop(&t); i++) {
      if (IsPubSubDelivery(t) || IsMonitorFeedDelivery(t)) [[unlikely]] {
        messages->push_back(t);
      } else {
        tasks->push_back(t);
      }
    }
  }
}

void Worker::RunInPublishOrder(std::vector<Task>& messages) {
  auto seq = [](const Task& t) {
    return IsPubSubDelivery(t) ? PubSubDeliverySeq(t) : MonitorFeedSeq(t);
  };
  std::stable_sort(messages.begin(), messages.end(),
                   [&](const Task& a, const Task& b) { return seq(a) < seq(b); });
  for (const Task& m : messages) m.Run();
}

void Worker::DeliverPendingMessages() {
  std::vector<Task> messages;
  PopInbox(&messages, &prefetched_);
  if (!messages.empty()) RunInPublishOrder(messages);
}

void Worker::MarkDirty(ClientConnection* c) { dirty_.push_back(c); }

void Worker::RemoveConnection(Client* c) {
  if (conns_.erase(c->id()) > 0) engine_->connected_clients.fetch_sub(1);
}

uint64_t Worker::next_random() {
  // xorshift64*
  rng_state_ ^= rng_state_ >> 12;
  rng_state_ ^= rng_state_ << 25;
  rng_state_ ^= rng_state_ >> 27;
  return rng_state_ * 2685821657736338717ull;
}

void Worker::AdoptConnection(int fd) {
  Config& cfg = engine_->config();
  stats_.total_connections_received++;
  int64_t max = cfg.maxclients().load(std::memory_order_relaxed);
  if (engine_->connected_clients.fetch_add(1) >= max) {
    engine_->connected_clients.fetch_sub(1);
    stats_.rejected_connections++;
    static const char kMsg[] = "-ERR max number of clients reached\r\n";
    ssize_t w = write(fd, kMsg, sizeof(kMsg) - 1);
    (void)w;  // best effort, as Redis does
    close(fd);
    return;
  }
  AclUserPtr default_user = AclRegistry::Get().Default();
  if (cfg.Bool("protected-mode") && !IsLoopbackPeer(fd) && default_user != nullptr &&
      default_user->nopass()) {
    // As Redis: told why, then closed, before anything is read.
    engine_->connected_clients.fetch_sub(1);
    stats_.rejected_connections++;
    ssize_t w = write(fd, kProtectedModeError, sizeof(kProtectedModeError) - 1);
    (void)w;  // best effort, as Redis does
    close(fd);
    return;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int64_t keepalive = cfg.Int("tcp-keepalive");
  if (keepalive > 0) {
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    int idle = static_cast<int>(keepalive);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  }
  uint64_t id = engine_->next_client_id.fetch_add(1);
  auto* c =
      new ClientConnection(this, loop_.get(), fd, id, SockName(fd, true), SockName(fd, false));
  conns_[id] = c;
  c->Start();
}

namespace {

// A subscriber whose user may no longer use one of its channels, patterns or shard
// channels (Redis 7.0's ACLKillPubsubClientsIfNeeded: it is disconnected).
bool LostASubscription(const AclUser& u, const Client& c) {
  if (c.subs == nullptr || c.subs->total() == 0 || u.unrestricted()) return false;
  for (int k = 0; k < kPubSubKinds; k++) {
    bool pattern = k == static_cast<int>(PubSubKind::kPattern);
    for (const auto& [name, index] : c.subs->of[k]) {
      if (!u.ChannelAllowed(name, pattern)) return true;
    }
  }
  return false;
}

}  // namespace

void Worker::RefreshAclUsers(Client* self) {
  AclRegistry& acl = AclRegistry::Get();
  std::vector<Client*> gone;
  std::vector<Client*> unsubscribed;
  for (auto& [id, c] : conns_) {
    if (c->acl_user == nullptr) continue;
    AclUserPtr now = acl.Find(c->acl_user->name());
    if (now == nullptr) {
      gone.push_back(c);
    } else {
      if (LostASubscription(*now, *c)) unsubscribed.push_back(c);
      c->SetAclUser(std::move(now));
    }
  }
  for (Client* c : unsubscribed) {
    if (c == self) {
      c->CloseAfterReply();
    } else {
      c->Kill();
    }
  }
  for (Client* c : gone) {
    c->SetAclUser(nullptr);
    c->SetAuthenticated(false);
    if (c == self) {
      c->CloseAfterReply();
    } else {
      c->Kill();
    }
  }
}

void Worker::AdoptMasterConnection(int fd, std::string early) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  uint64_t id = engine_->next_client_id.fetch_add(1);
  auto* c =
      new ClientConnection(this, loop_.get(), fd, id, SockName(fd, true), SockName(fd, false));
  engine_->connected_clients.fetch_add(1);
  conns_[id] = c;
  c->MakeMaster();
  master_conn_ = c;
  engine_->replication().NoteMasterIo(now_ms_);
  engine_->replication().SetLink(ReplicationState::Link::kUp, WallClockMs());
  next_ack_ms_ = 0;
  c->StartWithInput(early);
  MasterLinkTimer();  // the first ACK at once: a diskless master waits for it
}

void Worker::MasterClosed(ClientConnection* c) {
  if (master_conn_ != c) return;
  master_conn_ = nullptr;
  ReplicationState& r = engine_->replication();
  if (r.is_replica()) r.SetLink(ReplicationState::Link::kDown, WallClockMs());
  if (r.on_master_closed) r.on_master_closed();
}

void Worker::CloseMasterConnection() {
  if (master_conn_ != nullptr) master_conn_->Kill();
}

void Worker::MasterLinkTimer() {
  ReplicationState& r = engine_->replication();
  int64_t timeout_ms = engine_->config().Int("repl-timeout") * 1000;
  if (now_ms_ - r.last_io_ms() > timeout_ms) {
    LogWarning("MASTER timeout: no data nor PING received for %lld seconds",
               static_cast<long long>(timeout_ms / 1000));
    master_conn_->Kill();
    return;
  }
  if (now_ms_ < next_ack_ms_) return;
  next_ack_ms_ = now_ms_ + 1000;
  std::string off = std::to_string(r.offset());
  std::string ack =
      "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$" + std::to_string(off.size()) + "\r\n" + off + "\r\n";
  master_conn_->SendToMaster(ack);
}

void Worker::UpdateMemoryState() {
  PublishUsed();
  published_client_.store(client_bytes_, std::memory_order_relaxed);
  int64_t limit = engine_->config().maxmemory().load(std::memory_order_relaxed);
  // A replica that ignores maxmemory (the default, as Redis's) is never over it: it
  // neither evicts (its master's DELs remove keys) nor refuses its own clients' writes.
  bool over = limit > 0 && engine_->UsedMemory() > static_cast<size_t>(limit) &&
              !(eviction_.replica_ignores_limit() && engine_->replication().is_replica());
  if (index_ == 0 && over != noted_over_) {
    noted_over_ = over;
    engine_->NoteOverMemory(over, now_ms_);
  }
  eviction_.SetOver(over);
  // Under an evicting policy, writes are refused only once no shard can evict.
  over_memory_limit_ =
      over && (eviction_.policy() == EvictionPolicy::kNoEviction || engine_->EvictionExhausted());
  // While the spill tier can still free memory, writes wait for it first.
  bool spill_wait = over_memory_limit_ && cold_gate_ != nullptr && cold_gate_->CanFreeMemory();
  input_gates_ =
      static_cast<uint8_t>(spill_wait ? (input_gates_ | kGateSpill) : (input_gates_ & ~kGateSpill));
  if (!memory_waiters_.empty()) [[unlikely]]
    WakeMemoryWaiters();
}

void Worker::WaitForMemory(ClientConnection* c) { memory_waiters_.push_back(c); }

void Worker::WakePauseWaiters() {
  // Each looks again: it goes on, or waits for a pause that is still on.
  std::vector<ClientConnection*> waiters;
  waiters.swap(pause_waiters_);
  for (ClientConnection* c : waiters) c->WakeFromPause();
}

void Worker::WakeMemoryWaiters() {
  // Every waiter looks again: it goes on, waits more, or (its time run out) is refused.
  std::vector<ClientConnection*> waiters;
  waiters.swap(memory_waiters_);
  for (ClientConnection* c : waiters) c->WakeFromMemoryWait();
}

void Worker::EvictClientsOverLimit() {
  int64_t limit = engine_->config().maxmemory_clients_bytes();
  // The others' biggest clients are read before the total: a worker publishes its
  // client bytes before its biggest client, so one seen to have evicted its hog is seen
  // without the hog's bytes too (else this worker, with a stale total over the limit and
  // the hog's worker now showing only small clients, would close one of its own).
  size_t elsewhere = limit > 0 ? engine_->LargestEvictableClientExcept(index_) : 0;
  size_t total = limit > 0 ? engine_->ClientMemory() : 0;
  if (limit <= 0 || total <= static_cast<size_t>(limit)) {
    if (published_largest_evictable_.load(std::memory_order_relaxed) != kLargestUnknown) {
      published_largest_evictable_.store(kLargestUnknown, std::memory_order_relaxed);
    }
    candidates_exhausted_logged_ = false;
    return;
  }
  // As in Redis, the biggest clients go first, process-wide: every worker over the
  // limit publishes its biggest evictable client, and a worker evicts a client only
  // while it is at least as big as the biggest any other worker published. So a small
  // client is never closed while a bigger one elsewhere could be (a worker holding only
  // small clients waits for the hog's worker to free the excess). Under the limit a
  // worker publishes "unknown", which holds every other worker back until it has
  // published its figure on its next turn (at most one expiry tick away).
  std::vector<std::pair<size_t, ClientConnection*>> candidates;
  for (auto& [id, c] : conns_) {
    auto* cc = static_cast<ClientConnection*>(c);
    if (!cc->no_evict && !cc->closing()) candidates.emplace_back(cc->charged_bytes(), cc);
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  size_t excess = total - static_cast<size_t>(limit);
  size_t freed = 0;
  size_t next = 0;
  for (; next < candidates.size() && freed < excess; next++) {
    auto [bytes, cc] = candidates[next];
    if (bytes < elsewhere) break;
    freed += bytes;
    stats_.evicted_clients++;
    cc->Evict();  // may delete it: not touched after
  }
  published_client_.store(client_bytes_, std::memory_order_release);
  published_largest_evictable_.store(next < candidates.size() ? candidates[next].first : 0,
                                     std::memory_order_release);
  if (freed < excess && next == candidates.size() && elsewhere == 0 &&
      !candidates_exhausted_logged_) {
    // Redis's words; said once until the process is under the limit again.
    LogWarning("Over client maxmemory after evicting all evictable clients");
    candidates_exhausted_logged_ = true;
  }
}

void Worker::RunTimers() {
  if (pause_gate()) [[unlikely]] {
    // CLIENT PAUSE ran out, or weakened (one purpose's ALL ended while another's WRITE
    // holds): the clients waiting for it look again.
    Engine::PauseMode mode = engine_->PauseModeAt(now_ms_);
    if (mode == Engine::kPauseNone) {
      SetPauseGate(false);
      WakePauseWaiters();
    } else if (mode < pause_mode_seen_) {
      WakePauseWaiters();
    }
    pause_mode_seen_ = mode;
  }
  if (now_ms_ < next_expire_ms_) return;
  if (engine_->config().generation() != wakeup_config_gen_) [[unlikely]]
    ApplyWakeupBatch(/*at_start=*/false);
  int64_t hz = engine_->config().Int("hz");
  next_expire_ms_ = now_ms_ + 1000 / (hz > 0 ? hz : 10);
  stats_.ops_rate.Sample(now_ms_, stats_.total_commands_processed);
  // Worker 0's input also holds the replica link's transfer of the master's image.
  uint64_t sync_in = index_ == 0 ? engine_->replication().sync_input_bytes() : 0;
  stats_.input_rate.Sample(now_ms_, stats_.total_net_input_bytes + sync_in);
  stats_.output_rate.Sample(now_ms_, stats_.total_net_output_bytes);
  stats_.repl_input_rate.Sample(now_ms_, stats_.total_net_repl_input_bytes + sync_in);
  stats_.repl_output_rate.Sample(now_ms_, stats_.total_net_repl_output_bytes);
  // A replica leaves expiring to its master, whose DEL arrives in the stream (as Redis).
  // Nor does a paused server expire keys (its replicas catch up with a still stream).
  bool paused = pause_gate() && engine_->PauseModeAt(now_ms_) != Engine::kPauseNone;
  if (engine_->active_expire() && !engine_->replication().is_replica() && !paused) {
    uint64_t t0 = CycleClock::Now();
    keyspace_.ActiveExpireCycle(now_ms_, kExpireBucketsPerTick);
    stats_.expire_cycle_ticks += CycleClock::Now() - t0;
  }
  if (index_ == 0) {
    for (ShardService* s : engine_->services()) s->OnTimer(*this);
    if (master_conn_ != nullptr) MasterLinkTimer();
    engine_->replication().ConfigureFrom(engine_->config());
  }
  loop_->RefreshBufferBytes();
  // Peak memory is sampled on the expiry tick (hz) by worker 0 and on every INFO/MEMORY.
  if (index_ == 0) engine_->UpdatePeakMemory(engine_->UsedMemory());
}

void Worker::ApplyWakeupBatch(bool at_start) {
  const Config& cfg = engine_->config();
  wakeup_config_gen_ = cfg.generation();
  ApplyBusyPoll(cfg.Int("io-uring-busy-poll-usec"), at_start);
  int64_t batch = cfg.Int("io-uring-wakeup-batch");
  int64_t usec = cfg.Int("io-uring-wakeup-batch-usec");
  if (!at_start && batch == wakeup_batch_ && usec == wakeup_batch_us_) return;
  wakeup_batch_ = batch;
  wakeup_batch_us_ = usec;
  loop_->SetWakeupBatch(static_cast<unsigned>(batch), static_cast<unsigned>(usec));
  // Worker 0 says it for all. At start-up, with io_uring, the backend's line names the
  // batch (engine.cc); other backends ignore it, which is said at start-up and on a
  // CONFIG SET alike.
  if (index_ != 0) return;
  if (std::string_view(loop_->name()) != "io_uring") {
    if (batch > 1) {
      LogWarning("io-uring-wakeup-batch %lld has no effect with the %s backend",
                 static_cast<long long>(batch), loop_->name());
    }
  } else if (at_start) {
    return;
  } else if (batch > 1) {
    LogNotice("io-uring-wakeup-batch set: wake-up batches of up to %lld within %lld us",
              static_cast<long long>(batch), static_cast<long long>(usec));
  } else {
    LogNotice("io-uring-wakeup-batch set to 1: wake-up batching off");
  }
}

void Worker::ApplyBusyPoll(int64_t usec, bool at_start) {
  if (!at_start && usec == busy_poll_us_) return;
  busy_poll_us_ = usec;
  loop_->SetBusyPoll(static_cast<unsigned>(usec));
  // Worker 0 says it for all, as for the wake-up batch (the start-up line of the
  // io_uring backend names it).
  if (index_ != 0) return;
  if (std::string_view(loop_->name()) != "io_uring") {
    if (usec > 0) {
      LogWarning("io-uring-busy-poll-usec %lld has no effect with the %s backend",
                 static_cast<long long>(usec), loop_->name());
    }
  } else if (!at_start) {
    LogNotice("io-uring-busy-poll-usec set to %lld%s", static_cast<long long>(usec),
              usec > 0 ? "" : ": busy polling off");
  }
}

namespace {
// "expired" and "new" keyspace notifications, as the keyspace reports them (notify.h).
// A master's feed propagates keys deleted by expiry or eviction as DEL (repl_feed.h).
class KeyEvents final : public KeyEventHook {
 public:
  void KeyExpired(uint32_t db, std::string_view key) override {
    Propagate(db, key);
    NotifyKeyspaceEvent(kNotifyExpired, "expired", key, db);
  }
  void KeyCreated(uint32_t db, std::string_view key) override {
    NotifyKeyspaceEvent(kNotifyNew, "new", key, db);
  }
  void KeyEvicted(uint32_t db, std::string_view key) override {
    Propagate(db, key);
    NotifyKeyspaceEvent(kNotifyEvicted, "evicted", key, db);
  }
  // Its DEL only, as Redis sends for a key it drops at load: no event.
  void KeyDroppedOnLoad(uint32_t db, std::string_view key) override { Propagate(db, key); }

 private:
  static void Propagate(uint32_t db, std::string_view key) {
    Worker* w = Worker::Current();
    if (w != nullptr && w->repl_on()) [[unlikely]]
      w->repl_feed().KeyDeleted(db, key, w->keyspace().changes());
  }
};
KeyEvents g_key_events;
}  // namespace

void Worker::ArmFiberPropagation(Client* c, const CommandSpec* spec,
                                 const std::shared_ptr<OwnedArgs>& args, uint32_t db) {
  if (!spec->is_write() || spec->no_fiber_propagation || (spec->flags & kCmdScript)) return;
  auto r = std::make_shared<FiberRepl>();
  r->args = args;
  r->db = db;
  c->next_fiber_origin.repl = std::move(r);
}

void Worker::SetReplFeed(bool on) {
  repl_feed_.set_publish_to_replicas(!engine_->process().cluster_yes);
  if (on && !repl_feed_.on()) repl_feed_.Enable(keyspace_.changes());
  if (!on) repl_feed_.Disable();
  SyncKeyEventHook();
}

void Worker::SyncKeyEventHook() {
  uint32_t f = g_notify_gate.load(std::memory_order_relaxed);
  bool on = ((f & (kNotifyKeyspace | kNotifyKeyevent)) &&
             (f & (kNotifyExpired | kNotifyNew | kNotifyEvicted))) ||
            (f & kNotifyTracking) ||  // expiry and eviction invalidate tracked keys
            repl_feed_.on();          // and reach a master's replicas as DEL
  keyspace_.set_event_hook(on ? &g_key_events : nullptr);
}

void Worker::RefreshSlowLimits() {
  const Config& cfg = engine_->config();
  int64_t slow_us = cfg.slowlog_slower_than();
  int64_t latency_ms = cfg.latency_monitor_threshold();
  uint64_t per_us = CycleClock::TicksPerMicro();
  auto ticks = [&](int64_t us) {
    return static_cast<uint64_t>(us) > UINT64_MAX / per_us ? UINT64_MAX
                                                           : static_cast<uint64_t>(us) * per_us;
  };
  slowlog_ticks_ = slow_us < 0 ? UINT64_MAX : ticks(slow_us);
  latency_ticks_ =
      latency_ms <= 0 || latency_ms > INT64_MAX / 1000 ? UINT64_MAX : ticks(latency_ms * 1000);
  watch_ticks_ = engine_->monitoring() ? 0 : std::min(slowlog_ticks_, latency_ticks_);
  latency_tracking_ = cfg.latency_tracking();
}

void Worker::NoteSlowCall(const CommandSpec* spec, uint64_t ticks, CmdArgs args, uint32_t db,
                          const Client* who, bool foreign) {
  if (engine_->monitoring() && !(spec->flags & kCmdAdmin)) FeedMonitors(spec, args, db, who);
  uint64_t us = CycleClock::ToMicros(ticks);
  int64_t now_sec = WallClockMs() / 1000;
  // EXEC is not logged: the commands it ran are (Redis's SKIP_SLOWLOG).
  if (ticks >= slowlog_ticks_ && spec->name != "exec") {
    std::string name;
    if (who != nullptr) name = foreign ? who->NameFromAnyThread() : who->name;
    engine_->slowlog().Add(spec, args, us, who != nullptr ? who->addr() : std::string(),
                           std::move(name), now_sec,
                           static_cast<size_t>(engine_->config().slowlog_max_len()));
  }
  if (ticks >= latency_ticks_) {
    engine_->slowlog().AddLatency((spec->flags & kCmdFast) ? "fast-command" : "command",
                                  static_cast<uint32_t>(std::min<uint64_t>(us / 1000, UINT32_MAX)),
                                  now_sec);
  }
}

void Worker::Run() {
  t_current = this;
  ErrorStats::SetForThisThread(&stats_.errors);
  ErrorStats::SetCodesDisabledHook([] {
    LogWarning(
        "INFO errorstats: a worker has seen %zu different error codes; its later errors "
        "are counted as %s until CONFIG RESETSTAT",
        ErrorStats::kMaxCodes, std::string(ErrorStats::kDisabledCode).c_str());
  });
  SyncKeyEventHook();
  now_ms_ = WallClockMs();
  RefreshSlowLimits();
  eviction_.StartTurn(now_ms_);
  loop_->RefreshBufferBytes();
  startup_used_.store(used_bytes(), std::memory_order_relaxed);
  published_used_.store(used_bytes(), std::memory_order_relaxed);
  const std::vector<ShardService*>& services = engine_->services();
  for (ShardService* s : services) s->OnWorkerStart(*this);
  while (!stop_.load(std::memory_order_relaxed)) {
    int timeout = 0;
    if (deferred_.empty() && prefetched_.empty() && !outbox_pending_ && dirty_.empty() &&
        keyspace_.lazyfree_pending() == 0 && !ServicesHaveWork() &&
        !external_pending_.load(std::memory_order_acquire)) {
      int64_t wake = next_expire_ms_;
      if (!memory_waiters_.empty()) wake = std::min(wake, now_ms_ + 1);
      if (!pause_waiters_.empty()) [[unlikely]] {
        int64_t end = engine_->pause_end_ms();
        wake = std::min(wake, end == 0 ? now_ms_ : end);
      }
      for (const auto& b : blocked_) {
        if (b->deadline_ms != 0 && b->deadline_ms < wake) wake = b->deadline_ms;
      }
      for (const ShardService* svc : services) {
        if (int64_t bound = svc->SleepBoundMs(*this); bound >= 0)
          wake = std::min(wake, now_ms_ + bound);
      }
      timeout = static_cast<int>(std::max<int64_t>(0, wake - now_ms_));
      if (poll_until_us_ != 0) [[unlikely]] {
        // Held by a script across shards that hopped here a moment ago: poll for its
        // next hop rather than sleep (sync_hop.h).
        if (locks_.whole_held() && WallClockUs() < poll_until_us_) {
          timeout = 0;
        } else {
          poll_until_us_ = 0;
        }
      }
      if (timeout > 0) {
        sleeping_.store(true, std::memory_order_seq_cst);
        if (!InboxEmpty() || stop_.load()) {
          sleeping_.store(false, std::memory_order_relaxed);
          timeout = 0;
        }
      }
    }
    // Commands run inside Poll (I/O callbacks) and after it (other workers' tasks); a
    // service's share (a snapshot's) is measured against both. (Poll only sleeps when
    // no service has work.)
    uint64_t commands_before = stats_.total_commands_processed + stats_.remote_commands;
    int64_t turn_start_us = WallClockUs();
    loop_->Poll(timeout);
    sleeping_.store(false, std::memory_order_relaxed);
    now_ms_ = WallClockMs();
    RefreshSlowLimits();
    eviction_.StartTurn(now_ms_);
    SyncKeyEventHook();
    DrainInbox();
    // Deferred tasks may defer more; bound the rounds so I/O is never starved.
    for (int round = 0; round < 8 && !deferred_.empty(); round++) {
      deferred_scratch_.swap(deferred_);
      for (const Task& t : deferred_scratch_) t.Run();
      deferred_scratch_.clear();
    }
    RunTimers();
    if (!blocked_.empty()) ExpireBlocked();
    // Deleted big collections and flushed tables are freed a slice per turn.
    if (keyspace_.lazyfree_pending() != 0) keyspace_.LazyFreeStep(kLazyFreeElementsPerTurn);
    // Services (a snapshot being written or loaded) take a slice of the turn.
    if (!services.empty()) {
      int64_t turn_ns = (WallClockUs() - turn_start_us) * 1000;
      bool busy = stats_.total_commands_processed + stats_.remote_commands != commands_before;
      for (ShardService* s : services) s->OnWorkerTurn(*this, turn_ns, busy);
    }
    UpdateMemoryState();
    eviction_.OnTurn();
    EvictClientsOverLimit();
    // Invalidations owed to tracking clients join the outbox (tracking.h).
    if (tracking_.has_work()) [[unlikely]]
      tracking_.EndTurn();
    // Tasks for other workers leave before this turn's replies do: whatever a client
    // learns from a reply (a PUBLISH delivered, say) is then already on its way.
    if (!monitor_feed_.empty()) [[unlikely]]
      FlushMonitorFeed();
    FlushOutbox();
    dirty_scratch_.swap(dirty_);
    for (ClientConnection* c : dirty_scratch_) c->FlushOutput();
    dirty_scratch_.clear();
    FlushOutbox();
  }
  CloseAll();
  ErrorStats::SetForThisThread(nullptr);
}

bool Worker::ServicesHaveWork() const {
  for (const ShardService* s : engine_->services()) {
    if (s->HasWork(*this)) return true;
  }
  return false;
}

void Worker::CloseAll() {
  {
    std::lock_guard<std::mutex> l(external_mu_);
    for (int fd : adoptions_) close(fd);  // accepted, never adopted
    adoptions_.clear();
  }
  std::vector<Client*> all;
  for (auto& [id, c] : conns_) all.push_back(c);
  for (Client* c : all) c->Kill();
  // Let the loop finish closing sockets; pending cross-shard work is abandoned at exit.
  for (int i = 0; i < 3; i++) loop_->Poll(0);
}

void Worker::SignalKeyReady(uint32_t db, std::string_view key) {
  if (blocking_.waiting_keys() == 0) return;
  if (t_ready_holds != nullptr) [[unlikely]] {
    // Inside a transaction or a script: served when it is done (blocking.h).
    t_ready_holds->per_shard[index_].emplace_back(db, std::string(key));
    return;
  }
  ready_keys_.emplace_back(db, std::string(key));
  if (serving_ready_) return;  // the loop below picks it up
  serving_ready_ = true;
  for (size_t i = 0; i < ready_keys_.size(); i++) {
    auto [d, k] = ready_keys_[i];
    blocking_.Serve(*this, d, k);
  }
  ready_keys_.clear();
  serving_ready_ = false;
}

void Worker::ServeHeldReady(ReadyHolds& h) {
  std::vector<std::pair<uint32_t, std::string>> keys;
  keys.swap(h.per_shard[index_]);
  if (keys.empty()) return;
  ReadyHolds* saved = t_ready_holds;
  t_ready_holds = nullptr;
  for (const auto& [db, key] : keys) SignalKeyReady(db, key);
  t_ready_holds = saved;
  // The pops served follow the record of the transaction or script at once (no command
  // of its follows here for them to go after).
  if (repl_on()) repl_feed().FlushServed();
}

void Worker::TrackBlocked(std::shared_ptr<BlockedClient> c) { blocked_.push_back(std::move(c)); }

size_t Worker::blocked_with_timeout() const {
  size_t n = 0;
  for (const auto& b : blocked_) n += b->deadline_ms != 0;
  return n;
}

void Worker::ExpireBlocked() {
  std::vector<std::coroutine_handle<>> timed_out;
  size_t keep = 0;
  for (size_t i = 0; i < blocked_.size(); i++) {
    std::shared_ptr<BlockedClient>& c = blocked_[i];
    if (c->state.load(std::memory_order_acquire) == BlockedClient::kWaiting &&
        c->deadline_ms != 0 && c->deadline_ms <= now_ms_) {
      int expected = BlockedClient::kWaiting;
      if (c->state.compare_exchange_strong(expected, BlockedClient::kCancelled) && c->handle) {
        timed_out.push_back(c->handle);
        c->handle = nullptr;
      }
    }
    if (c->state.load(std::memory_order_acquire) == BlockedClient::kWaiting) {
      blocked_[keep++] = std::move(c);
    }
  }
  blocked_.resize(keep);
  // Resumed after the list is settled: a fiber may block again (TrackBlocked).
  for (std::coroutine_handle<> h : timed_out) h.resume();
}

}  // namespace strata
