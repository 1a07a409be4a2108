#include "server/cluster/cluster_bus.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "server/base/config.h"
#include "server/base/log.h"
#include "server/cluster/cluster_service.h"
#include "server/engine/engine.h"
#include "storage/mono_clock.h"

namespace strata {

struct ClusterBus::Link {
  int fd = -1;
  int64_t last_message_ms = 0;  // when it last sent a whole message (or connected)
  std::string peer;             // "ip:port" of the other end
  std::string local_ip;         // the address the peer reached
  std::string in;
  std::string out;
  size_t out_sent = 0;
  bool warned = false;  // a bad message from it was logged at warning level
};

namespace {

int64_t NowMs() { return static_cast<int64_t>(MonoNs() / 1000000); }

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
    : engine_(engine), service_(service) {}

ClusterBus::~ClusterBus() { Stop(); }

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
  close(wake_fd_);
  wake_fd_ = -1;
}

void ClusterBus::Run() {
  std::vector<pollfd> fds;
  int64_t accept_paused_until_ms = 0;
  while (!stop_.load(std::memory_order_acquire)) {
    int64_t now = NowMs();
    // Links that have sent no whole message for cluster-node-timeout are closed: a peer
    // cannot hold a link (and its buffer) open for nothing.
    int64_t idle_ms = engine_->config().Int("cluster-node-timeout");
    std::erase_if(link_list_, [&](Link* l) {
      if (now - l->last_message_ms <= idle_ms) return false;
      LogVerbose("Cluster bus: closing the idle link from %s", l->peer.c_str());
      close(l->fd);
      delete l;
      return true;
    });
    fds.clear();
    fds.push_back(pollfd{wake_fd_, POLLIN, 0});
    // While accepting is paused (out of descriptors, or as many links as maxclients),
    // the listening sockets are not polled, so the loop does not spin on them.
    bool accepting = now >= accept_paused_until_ms;
    for (int fd : listen_fds_) fds.push_back(pollfd{accepting ? fd : -1, POLLIN, 0});
    for (Link* l : link_list_) {
      short ev = POLLIN;
      if (l->out_sent < l->out.size()) ev |= POLLOUT;
      fds.push_back(pollfd{l->fd, ev, 0});
    }
    int n = poll(fds.data(), fds.size(), accepting ? 1000 : 100);
    if (n < 0) {
      if (errno == EINTR) continue;
      LogWarning("Cluster bus: poll failed: %s", std::strerror(errno));
      usleep(100 * 1000);
      continue;
    }
    if (n == 0) continue;
    size_t at = 1;
    for (size_t i = 0; i < listen_fds_.size(); i++, at++) {
      if ((fds[at].revents & POLLIN) && !Accept(listen_fds_[i]))
        accept_paused_until_ms = NowMs() + 100;
    }
    // Links accepted above are not in fds yet: only the first `count` have results.
    size_t count = fds.size() - at;
    std::vector<Link*> keep;
    keep.reserve(link_list_.size());
    for (size_t i = 0; i < link_list_.size(); i++) {
      Link* l = link_list_[i];
      bool ok = true;
      if (i < count) {
        short re = fds[at + i].revents;
        if (re & (POLLIN | POLLHUP | POLLERR)) ok = ReadLink(*l);
        if (ok && (re & POLLOUT)) ok = FlushLink(*l);
      }
      if (ok) {
        keep.push_back(l);
      } else {
        close(l->fd);
        delete l;
      }
    }
    link_list_.swap(keep);
    links_now_.store(link_list_.size(), std::memory_order_relaxed);
  }
}

bool ClusterBus::Accept(int listen_fd) {
  size_t max_links = static_cast<size_t>(engine_->config().Int("maxclients"));
  while (true) {
    if (link_list_.size() >= max_links) {
      LogWarning("Cluster bus: %zu links (maxclients); not accepting more for now",
                 link_list_.size());
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
    l->peer = IpOf(peer) + ":" + std::to_string(PortOf(peer));
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
  if (m.h.type != bus::kPing && m.h.type != bus::kMeet) return;
  if (engine_->config().String("cluster-announce-ip").empty() && !l.local_ip.empty()) {
    bool meet = m.h.type == bus::kMeet;
    std::string ip = l.local_ip;
    service_->Change(
        [&](ClusterState& st, std::string*) {
          if (!meet && !st.myself().ip.empty()) return false;
          if (st.myself().ip == ip) return false;
          st.myself().ip = ip;
          LogNotice("IP address for this node updated to %s", ip.c_str());
          return true;
        },
        true);
  }
  l.out += Pong();
  sent_[bus::kPong].fetch_add(1, std::memory_order_relaxed);
}

std::string ClusterBus::Pong() {
  bus::Message m;
  m.h.type = bus::kPong;
  std::string announce = engine_->config().String("cluster-announce-ip");
  if (announce.size() < bus::kIpLen) m.h.ip = announce;
  m.h.offset = static_cast<uint64_t>(engine_->replication().offset());
  bool full = engine_->config().Int("cluster-require-full-coverage") != 0;
  service_->Read([&](const ClusterState& st) {
    const ClusterNode& me = st.myself();
    m.h.port = static_cast<uint16_t>(me.port);
    m.h.cport = static_cast<uint16_t>(me.cport);
    m.h.current_epoch = st.current_epoch();
    m.h.sender = me.id;
    m.h.flags = me.flags;
    // As Redis: an address only when one is announced; else the peer takes the link's.
    (void)me;
    m.h.state = st.Ok(full) ? 0 : 1;
    const ClusterNode* master = &me;
    if (!me.is_master() && !me.master_id.empty()) {
      m.h.master = me.master_id;
      if (const ClusterNode* mm = st.FindNode(me.master_id)) master = mm;
    }
    m.h.config_epoch = master->config_epoch;
    for (uint32_t s = 0; s < kClusterSlots; s++) {
      if (st.SlotOwner(s) == master) bus::SetSlot(&m.h.slots, s);
    }
    m.hostname = me.hostname;
  });
  return bus::Encode(m);
}

}  // namespace strata
