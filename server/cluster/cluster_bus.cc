#include "server/cluster/cluster_bus.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <unordered_set>

#include "core/hash.h"
#include "server/base/config.h"
#include "server/base/log.h"
#include "server/cluster/cluster_service.h"
#include "server/engine/engine.h"
#include "server/engine/pubsub.h"
#include "server/engine/replication_state.h"
#include "server/engine/task.h"
#include "server/engine/worker.h"
#include "storage/mono_clock.h"

namespace strata {

struct ClusterBus::Link {
  int fd = -1;
  bool outbound = false;  // opened by this node, to the node with node_serial
  uint64_t node_serial = 0;
  bool connecting = false;      // outbound: the connect has not finished
  bool dead = false;            // to be closed at the end of this turn
  int64_t created_wall_ms = 0;  // for CLUSTER LINKS
  int64_t last_message_ms = 0;  // when it last sent a whole message (or connected)
  std::string peer;             // "ip:port" of the other end
  std::string peer_ip;
  std::string local_ip;  // the address the peer reached
  std::string node_id;   // the node it is to or from, once known
  std::string in;
  std::string out;
  size_t out_sent = 0;
  bool warned = false;  // a bad message from it was logged at warning level
};

namespace {

int64_t NowMs() { return static_cast<int64_t>(MonoNs() / 1000000); }

// Ping and pong times travel in gossip between nodes, so they are wall-clock ms.
int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string IpOf(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, buf, sizeof(buf));
  } else if (ss.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof(buf));
  }
  return buf;
}

int PortOf(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  }
  return 0;
}

}  // namespace

ClusterBus::ClusterBus(Engine* engine, ClusterService* service)
    : engine_(engine), service_(service), gossip_(MonoNs() ^ static_cast<uint64_t>(WallMs())) {}

ClusterBus::~ClusterBus() {
  Stop();
  if (wake_fd_ >= 0) close(wake_fd_);
}

bool ClusterBus::Start(std::vector<int> listen_fds, std::string* error) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    *error = std::string("cluster bus: eventfd: ") + std::strerror(errno);
    for (int fd : listen_fds) close(fd);
    return false;
  }
  listen_fds_ = std::move(listen_fds);
  thread_ = std::thread([this] { Run(); });
  return true;
}

void ClusterBus::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof(one));
  (void)n;
  thread_.join();
  for (Link* l : link_list_) {
    close(l->fd);
    delete l;
  }
  link_list_.clear();
  for (int fd : listen_fds_) close(fd);
  listen_fds_.clear();
  // The wake-up descriptor stays open until the bus is destroyed (after the workers): a
  // worker that still has the bus's address may wake it after Stop().
}

void ClusterBus::Wake() const {
  tick_now_.store(true, std::memory_order_release);
  WakeThread();
}

void ClusterBus::WakeThread() const {
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof(one));
  (void)n;
}

void ClusterBus::Run() {
  std::vector<pollfd> fds;
  int64_t accept_paused_until_ms = 0;
  int64_t next_tick_ms = 0;
  while (!stop_.load(std::memory_order_acquire)) {
    int64_t now = NowMs();
    if (now >= next_tick_ms) {
      Tick();
      next_tick_ms = now + ClusterGossip::kTickMs;
    }
    // Inbound links that have sent no whole message for cluster-node-timeout are
    // closed: a peer cannot hold a link (and its buffer) open for nothing. Outbound ones
    // are the gossip's to judge.
    int64_t idle_ms = engine_->config().Int("cluster-node-timeout");
    for (Link* l : link_list_) {
      if (!l->outbound && !l->dead && now - l->last_message_ms > idle_ms) {
        LogVerbose("Cluster bus: closing the idle link from %s", l->peer.c_str());
        l->dead = true;
      }
      if (l->outbound && l->connecting && !l->dead && now - l->last_message_ms > idle_ms) {
        // A connect that does not finish within the node timeout (a peer that drops
        // packets) fails like a refused one.
        LogVerbose("Cluster bus: connecting to %s timed out", l->peer.c_str());
        l->dead = true;
        int64_t wall = WallMs();
        uint64_t serial = l->node_serial;
        service_->BusUpdate([&](ClusterState& st) -> GossipEffects* {
          if (ClusterNode* n = st.FindBySerial(serial)) gossip_.OnConnectFailed(*n, wall);
          return nullptr;
        });
      }
    }
    std::vector<Link*> keep;
    keep.reserve(link_list_.size());
    for (Link* l : link_list_) {
      if (l->dead) {
        CloseLink(l);
      } else {
        keep.push_back(l);
      }
    }
    link_list_.swap(keep);
    links_now_.store(link_list_.size(), std::memory_order_relaxed);

    fds.clear();
    fds.push_back(pollfd{wake_fd_, POLLIN, 0});
    // While accepting is paused (out of descriptors, or as many links as maxclients),
    // the listening sockets are not polled, so the loop does not spin on them.
    bool accepting = now >= accept_paused_until_ms;
    for (int fd : listen_fds_) fds.push_back(pollfd{accepting ? fd : -1, POLLIN, 0});
    for (Link* l : link_list_) {
      short ev = l->connecting ? 0 : POLLIN;
      if (l->connecting || l->out_sent < l->out.size()) ev |= POLLOUT;
      fds.push_back(pollfd{l->fd, ev, 0});
    }
    int wait_ms = static_cast<int>(std::clamp<int64_t>(next_tick_ms - NowMs(), 0, 100));
    int n = poll(fds.data(), fds.size(), wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      LogWarning("Cluster bus: poll failed: %s", std::strerror(errno));
      usleep(100 * 1000);
      continue;
    }
    if (n == 0) continue;
    if (fds[0].revents & POLLIN) {
      uint64_t v = 0;
      ssize_t r = read(wake_fd_, &v, sizeof(v));
      (void)r;
      if (tick_now_.exchange(false, std::memory_order_acq_rel)) next_tick_ms = 0;
      SendPublishes();
    }
    size_t at = 1;
    for (size_t i = 0; i < listen_fds_.size(); i++, at++) {
      if ((fds[at].revents & POLLIN) && !Accept(listen_fds_[i]))
        accept_paused_until_ms = NowMs() + 100;
    }
    // Links added above are not in fds yet: only the first `count` have results.
    size_t count = std::min(fds.size() - at, link_list_.size());
    for (size_t i = 0; i < count; i++) {
      Link* l = link_list_[i];
      if (l->dead) continue;
      short re = fds[at + i].revents;
      if (re == 0) continue;
      bool ok = true;
      if (l->connecting) {
        ok = FinishConnect(*l);
      } else {
        if (re & (POLLIN | POLLHUP | POLLERR)) ok = ReadLink(*l);
        if (ok && !l->dead && (re & POLLOUT)) ok = FlushLink(*l);
      }
      if (!ok) l->dead = true;
    }
  }
}

void ClusterBus::Propagate(bool shard, std::string_view channel, std::string_view message) const {
  {
    std::lock_guard<std::mutex> g(pub_mu_);
    size_t bytes = channel.size() + message.size() + kPublishEntryBytes;
    if (pub_bytes_ + bytes > kMaxPublishQueueBytes) {
      pub_dropped_.fetch_add(1, std::memory_order_relaxed);
      if (!pub_warned_) {
        LogWarning("Cluster bus: %zu bytes of PUBLISH wait for the bus; dropping more", pub_bytes_);
        pub_warned_ = true;
      }
      return;
    }
    pub_bytes_ += bytes;
    pub_queue_.push_back(PendingPublish{shard, std::string(channel), std::string(message)});
  }
  WakeThread();  // the queue only: no tick
}

void ClusterBus::RequestFailover(FailoverMode mode) const {
  failover_request_.store(static_cast<int>(mode) + 1, std::memory_order_release);
  Wake();
}

void ClusterBus::SendPublishes() {
  std::vector<PendingPublish> queue;
  {
    std::lock_guard<std::mutex> g(pub_mu_);
    if (pub_queue_.empty()) return;
    queue.swap(pub_queue_);
    pub_bytes_ = 0;
    pub_warned_ = false;
  }
  GossipSettings settings = Settings();
  // The targets and this node's header once per batch (the header describes every slot).
  std::vector<uint64_t> to[2];
  bus::Message m;
  service_->BusUpdate([&](ClusterState& st) -> GossipEffects* {
    to[0] = ClusterGossip::PublishTargets(st, false);
    to[1] = ClusterGossip::PublishTargets(st, true);
    if (!to[0].empty() || !to[1].empty())
      m.h = ClusterGossip::MyHeader(st, bus::kPublish, settings);
    return nullptr;
  });
  for (PendingPublish& p : queue) {
    const std::vector<uint64_t>& targets = to[p.shard ? 1 : 0];
    if (targets.empty()) continue;
    uint16_t type = p.shard ? bus::kPublishShard : bus::kPublish;
    m.h.type = type;
    m.channel = std::move(p.channel);
    m.payload = std::move(p.message);
    std::string bytes = bus::Encode(m);
    for (uint64_t serial : targets) {
      auto it = outbound_.find(serial);
      if (it == outbound_.end()) continue;
      sent_[type].fetch_add(1, std::memory_order_relaxed);
      Send(*it->second, bytes);
    }
  }
}

void ClusterBus::Deliver(std::vector<GossipEffects::Published>& published) {
  uint32_t shards = engine_->shard_count();
  for (GossipEffects::Published& p : published) {
    // A shard channel's messages go through its shard, as SPUBLISH runs there; the
    // others through worker 0. One worker each, in arrival order.
    uint32_t w = p.shard ? ShardOfKey(p.channel, shards) : 0;
    bool shard = p.shard;
    engine_->worker(w).PostExternal(
        MakeTask([shard, channel = std::move(p.channel), message = std::move(p.message)] {
          Publish(shard ? PubSubKind::kShard : PubSubKind::kChannel, channel, message);
        }));
  }
}

GossipSettings ClusterBus::Settings() const {
  const Config& cfg = engine_->config();
  GossipSettings s;
  s.node_timeout_ms = cfg.Int("cluster-node-timeout");
  s.require_full_coverage = cfg.Int("cluster-require-full-coverage") != 0;
  s.announce_ip = cfg.String("cluster-announce-ip");
  const ReplicationState& repl = engine_->replication();
  s.repl_offset = static_cast<uint64_t>(repl.offset());
  s.replica_no_failover = cfg.Int("cluster-replica-no-failover") != 0;
  s.replica_validity_factor = cfg.Int("cluster-replica-validity-factor");
  s.repl_ping_period_s = cfg.Int("repl-ping-replica-period");
  s.allow_replica_migration = cfg.Int("cluster-allow-replica-migration") != 0;
  s.migration_barrier = cfg.Int("cluster-migration-barrier");
  if (repl.is_replica() && repl.link() != ReplicationState::Link::kUp) {
    int64_t since = repl.down_since_ms();
    // Never up since it became a replica: its data is as old as can be.
    s.master_link_down_ms = since > 0 ? WallMs() - since : INT64_MAX / 4;
  }
  return s;
}

void ClusterBus::Tick() {
  GossipSettings settings = Settings();
  GossipEffects fx;
  std::vector<uint64_t> broadcast_to;
  struct Want {
    std::string ip;
    int cport;
  };
  std::unordered_map<uint64_t, Want> want;
  int failover = failover_request_.exchange(0, std::memory_order_acq_rel);
  service_->BusUpdate([&](ClusterState& st) {
    if (failover != 0) {
      gossip_.ManualFailover(st, static_cast<FailoverMode>(failover - 1), settings, WallMs(), &fx);
    }
    gossip_.OnTick(st, settings, WallMs(), &fx);
    for (const auto& n : st.nodes()) {
      if (n.get() == &st.myself() || (n->flags & kNodeNoAddr) || n->ip.empty() || n->cport <= 0)
        continue;
      want[n->serial] = Want{n->ip, n->cport};
      if (!(n->flags & kNodeHandshake) && n->connected) broadcast_to.push_back(n->serial);
    }
    return &fx;
  });
  Apply(fx, broadcast_to);
  for (auto& [serial, l] : outbound_) {
    if (want.find(serial) == want.end()) l->dead = true;
  }
  for (auto& [serial, w] : want) {
    auto it = outbound_.find(serial);
    if (it == outbound_.end() || it->second->dead) Connect(serial, w.ip, w.cport);
  }
  PublishStats();
}

void ClusterBus::Connect(uint64_t serial, const std::string& ip, int cport) {
  auto failed = [&](const char* what, int err) {
    LogVerbose("Cluster bus: cannot connect to %s:%d (%s: %s)", ip.c_str(), cport, what,
               std::strerror(err));
    int64_t now = WallMs();
    service_->BusUpdate([&](ClusterState& st) -> GossipEffects* {
      if (ClusterNode* n = st.FindBySerial(serial)) gossip_.OnConnectFailed(*n, now);
      return nullptr;
    });
  };
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(cport));
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(cport));
    len = sizeof(sockaddr_in6);
  } else {
    failed("address", EINVAL);
    return;
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    failed("socket", errno);
    return;
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS) {
    int err = errno;
    close(fd);
    failed("connect", err);
    return;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  auto* l = new Link();
  l->fd = fd;
  l->outbound = true;
  l->node_serial = serial;
  l->connecting = true;
  l->created_wall_ms = WallMs();
  l->last_message_ms = NowMs();
  l->peer = ip + ":" + std::to_string(cport);
  l->peer_ip = ip;
  if (auto it = outbound_.find(serial); it != outbound_.end()) {
    it->second->outbound = false;  // the dead one it replaces no longer stands for the node
    it->second->node_serial = 0;
  }
  outbound_[serial] = l;
  link_list_.push_back(l);
  int64_t now = WallMs();
  service_->BusUpdate([&](ClusterState& st) -> GossipEffects* {
    if (ClusterNode* n = st.FindBySerial(serial)) ClusterGossip::OnConnecting(*n, now);
    return nullptr;
  });
}

bool ClusterBus::FinishConnect(Link& l) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(l.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err == EINPROGRESS) return true;
  int64_t now = WallMs();
  if (err != 0) {
    LogVerbose("Cluster bus: cannot connect to %s (%s)", l.peer.c_str(), std::strerror(err));
    service_->BusUpdate([&](ClusterState& st) -> GossipEffects* {
      if (ClusterNode* n = st.FindBySerial(l.node_serial)) gossip_.OnConnectFailed(*n, now);
      return nullptr;
    });
    return false;
  }
  l.connecting = false;
  l.last_message_ms = NowMs();
  sockaddr_storage local{};
  socklen_t llen = sizeof(local);
  if (getsockname(l.fd, reinterpret_cast<sockaddr*>(&local), &llen) == 0) l.local_ip = IpOf(local);
  GossipSettings settings = Settings();
  std::string first;
  uint16_t type = bus::kPing;
  service_->BusUpdate([&](ClusterState& st) -> GossipEffects* {
    ClusterNode* n = st.FindBySerial(l.node_serial);
    if (n == nullptr) return nullptr;
    type = (n->flags & kNodeMeet) ? bus::kMeet : bus::kPing;
    first = gossip_.OnLinkConnected(st, *n, settings, now);
    if (!(n->flags & kNodeHandshake)) l.node_id = n->id;
    return nullptr;
  });
  if (first.empty()) return false;  // the node went meanwhile
  sent_[type].fetch_add(1, std::memory_order_relaxed);
  l.out.insert(0, first);  // before what was queued while it connected
  if (!FlushLink(l)) return false;
  return !l.dead;
}

void ClusterBus::Send(Link& l, const std::string& bytes) {
  if (l.dead) return;
  l.out += bytes;  // on a link still connecting, sent once it is up (after its PING)
  if (l.connecting) return;
  if (!FlushLink(l)) l.dead = true;
}

void ClusterBus::Apply(GossipEffects& fx, const std::vector<uint64_t>& broadcast_to) {
  // A manual failover's pause is on before the PING that tells the replica the offset.
  if (fx.pause_writes_until_ms != 0) service_->PauseWrites(fx.pause_writes_until_ms);
  if (fx.unpause_clients) service_->Unpause();
  for (uint64_t serial : fx.drop_links) {
    if (auto it = outbound_.find(serial); it != outbound_.end()) it->second->dead = true;
  }
  for (auto& [serial, bytes] : fx.sends) {
    auto it = outbound_.find(serial);
    if (it == outbound_.end()) continue;
    sent_[std::min<uint16_t>(bus::PeekType(bytes), bus::kTypeCount)].fetch_add(
        1, std::memory_order_relaxed);
    Send(*it->second, bytes);
  }
  for (const std::string& bytes : fx.broadcasts) {
    for (uint64_t serial : broadcast_to) {
      auto it = outbound_.find(serial);
      if (it == outbound_.end()) continue;
      sent_[std::min<uint16_t>(bus::PeekType(bytes), bus::kTypeCount)].fetch_add(
          1, std::memory_order_relaxed);
      Send(*it->second, bytes);
    }
  }
  if (fx.replicate && hooks_.follow) {
    LogNotice("Cluster: replicating %s:%d", fx.master_ip.c_str(), fx.master_port);
    hooks_.follow(fx.master_ip, fx.master_port);
  } else if (fx.become_master && hooks_.stop) {
    hooks_.stop();
  }
  if (!fx.dirty_slots.empty() && !fx.replicate) {
    // Still a master: the keys of the slots it lost go (a new replica's sync replaces
    // everything anyway), as in Redis.
    LogWarning(
        "Cluster: %zu slots this node held keys in moved to another master by a newer epoch; "
        "deleting those keys",
        fx.dirty_slots.size());
    service_->DropKeysInSlots(std::move(fx.dirty_slots));
  }
}

void ClusterBus::CloseLink(Link* l) {
  if (l->outbound) {
    auto it = outbound_.find(l->node_serial);
    if (it != outbound_.end() && it->second == l) {
      outbound_.erase(it);
      service_->BusUpdate([&](ClusterState& st) -> GossipEffects* {
        if (ClusterNode* n = st.FindBySerial(l->node_serial)) n->connected = false;
        return nullptr;
      });
    }
  }
  close(l->fd);
  delete l;
}

void ClusterBus::PublishStats() {
  std::vector<LinkStat> stats;
  for (Link* l : link_list_) {
    if (l->dead || l->node_id.empty()) continue;
    LinkStat s;
    s.outbound = l->outbound;
    s.node = l->node_id;
    s.create_time = l->created_wall_ms;
    s.writing = l->out_sent < l->out.size();
    s.send_buffer_allocated = l->out.capacity();
    s.send_buffer_used = l->out.size() - l->out_sent;
    stats.push_back(std::move(s));
  }
  std::lock_guard<std::mutex> g(stats_mu_);
  stats_.swap(stats);
}

std::vector<ClusterBus::LinkStat> ClusterBus::LinkStats() const {
  std::lock_guard<std::mutex> g(stats_mu_);
  return stats_;
}

bool ClusterBus::Accept(int listen_fd) {
  size_t max_links = static_cast<size_t>(engine_->config().Int("maxclients"));
  while (true) {
    size_t inbound = link_list_.size() - outbound_.size();
    if (inbound >= max_links) {
      LogWarning("Cluster bus: %zu links (maxclients); not accepting more for now", inbound);
      return false;
    }
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    int fd =
        accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
        return true;
      LogWarning("Cluster bus: accept failed: %s", std::strerror(errno));
      return false;  // out of descriptors, say: pause accepting for a moment
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto* l = new Link();
    l->fd = fd;
    l->last_message_ms = NowMs();
    l->peer_ip = IpOf(peer);
    l->peer = l->peer_ip + ":" + std::to_string(PortOf(peer));
    l->created_wall_ms = WallMs();
    sockaddr_storage local{};
    socklen_t llen = sizeof(local);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &llen) == 0) l->local_ip = IpOf(local);
    link_list_.push_back(l);
    LogVerbose("Accepting cluster node connection from %s", l->peer.c_str());
  }
}

bool ClusterBus::ReadLink(Link& l) {
  const Config& cfg = engine_->config();
  size_t max_len = static_cast<size_t>(cfg.Int("cluster-bus-max-message-bytes"));
  size_t out_limit = static_cast<size_t>(cfg.Int("cluster-link-sendbuf-limit"));
  char buf[16384];
  // One read per turn of the loop: a link that streams cannot keep the others waiting,
  // and what it makes this node answer is bounded before the next read.
  {
    ssize_t n = read(l.fd, buf, sizeof(buf));
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    l.in.append(buf, static_cast<size_t>(n));
    // Whole messages are taken as they complete, so the buffer holds at most one message
    // and the next one's first bytes.
    size_t used = 0;
    while (true) {
      std::string_view rest(l.in.data() + used, l.in.size() - used);
      uint32_t len = 0;
      bus::Frame f = bus::PeekFrame(rest, max_len, &len);
      if (f == bus::Frame::kNeedMore) break;
      if (f == bus::Frame::kBad) {
        LogWarning("Cluster bus: bad message length or signature from %s (the link is closed)",
                   l.peer.c_str());
        return false;
      }
      if (rest.size() < len) break;
      bus::Message m;
      std::string why;
      l.last_message_ms = NowMs();
      if (bus::Decode(rest.substr(0, len), &m, &why)) {
        received_[std::min<uint16_t>(m.h.type, bus::kTypeCount)].fetch_add(
            1, std::memory_order_relaxed);
        Handle(l, m);
        if (l.dead) return false;
        if (out_limit != 0 && l.out.size() - l.out_sent > out_limit) {
          LogWarning(
              "Cluster bus: the link from %s has %zu bytes it does not read "
              "(cluster-link-sendbuf-limit); closing it",
              l.peer.c_str(), l.out.size() - l.out_sent);
          over_limit_.fetch_add(1, std::memory_order_relaxed);
          return false;
        }
      } else {
        Log(l.warned ? LogLevel::kVerbose : LogLevel::kWarning, "Cluster bus: dropped %s from %s",
            why.c_str(), l.peer.c_str());
        l.warned = true;
      }
      used += len;
    }
    l.in.erase(0, used);
  }
  return FlushLink(l);
}

bool ClusterBus::FlushLink(Link& l) {
  while (l.out_sent < l.out.size()) {
    ssize_t n = write(l.fd, l.out.data() + l.out_sent, l.out.size() - l.out_sent);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      return false;
    }
    l.out_sent += static_cast<size_t>(n);
  }
  if (l.out_sent == l.out.size()) {
    l.out.clear();
    l.out_sent = 0;
    return true;
  }
  size_t limit = static_cast<size_t>(engine_->config().Int("cluster-link-sendbuf-limit"));
  if (limit != 0 && l.out.size() - l.out_sent > limit) {
    LogWarning(
        "Cluster bus: the link from %s has %zu bytes it does not read "
        "(cluster-link-sendbuf-limit); closing it",
        l.peer.c_str(), l.out.size() - l.out_sent);
    over_limit_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void ClusterBus::Handle(Link& l, const bus::Message& m) {
  GossipSettings settings = Settings();
  LinkInfo info;
  info.outbound = l.outbound;
  info.node_serial = l.node_serial;
  info.peer_ip = l.peer_ip;
  info.local_ip = l.local_ip;
  GossipEffects fx;
  std::vector<uint64_t> broadcast_to;
  int64_t now = WallMs();
  service_->BusUpdate([&](ClusterState& st) {
    gossip_.OnMessage(st, m, info, settings, now, &fx);
    // The node the link is to or from, by its id (a handshake node's changes when the
    // handshake ends).
    const ClusterNode* n = l.outbound ? st.FindBySerial(l.node_serial) : st.FindNode(m.h.sender);
    if (n != nullptr && !(n->flags & kNodeHandshake)) l.node_id = n->id;
    if (!fx.broadcasts.empty()) {
      for (const auto& n : st.nodes()) {
        if (n.get() != &st.myself() && !(n->flags & kNodeHandshake) && n->connected)
          broadcast_to.push_back(n->serial);
      }
    }
    return &fx;
  });
  if (!fx.reply.empty()) {
    sent_[bus::kPong].fetch_add(1, std::memory_order_relaxed);
    l.out += fx.reply;
  }
  if (fx.close_link) l.dead = true;
  Apply(fx, broadcast_to);
  if (!fx.published.empty()) Deliver(fx.published);
}

}  // namespace strata
