// ClusterBus: this node's end of the Redis Cluster bus (cluster-enabled yes;
// docs/ARCHITECTURE.md "Cluster", docs/CLUSTER_BUS.md for the bytes).
//
// Design
//   One thread of its own serves the bus: it accepts connections on the bus port (the
//   Server opens the sockets, on the same addresses as the client port), opens a link
//   to every other node it knows, and reads each link's stream with the codec
//   (bus_message.h). What to do with a message, and on the clock, is ClusterGossip's
//   (cluster_gossip.h): the bus calls it under the cluster service's mutex
//   (ClusterService::BusUpdate, which saves nodes.conf and hands the workers a new
//   routing when the layout changed) and carries out what it returns. The workers never
//   see the bus.
//   - Links. An inbound link is the peer's: PINGs and MEETs come on it and are answered
//     on it. An outbound link is this node's, one per known node with an address (not
//     myself, not noaddr): its PINGs (or the first MEET) go on it and the PONGs come
//     back on it. Every tick (ClusterGossip::kTickMs) the links are matched to the
//     nodes: a node without a link gets a non-blocking connect (retried each tick while
//     it fails, which counts as a ping with no answer), a link whose node is gone is
//     closed. A node is "connected" while its outbound link is up.
//   - Framing: a wrong signature, or a length below the header's or above
//     cluster-bus-max-message-bytes, closes the link (as Redis closes it). A message that
//     does not hold together is dropped and the link stays. Either is logged, once per
//     link at warning level and at verbose level after, so a peer cannot flood the log.
//   - Bounded: a link whose unsent bytes pass cluster-link-sendbuf-limit (a peer that
//     sends and never reads) is closed; each link is read once per turn of the loop (a
//     streaming peer cannot starve the others); an inbound link that sends no whole
//     message for cluster-node-timeout is closed; at most maxclients inbound links are
//     accepted, and accepting pauses briefly when descriptors run out.
//
// Thread-safety: Start() and Stop() on the main thread; Wake() and the counters from any
// thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/cluster/bus_message.h"
#include "server/cluster/cluster_gossip.h"

namespace strata {

class ClusterService;
class Engine;

class ClusterBus {
 public:
  ClusterBus(Engine* engine, ClusterService* service);
  ~ClusterBus();  // Stop()
  ClusterBus(const ClusterBus&) = delete;
  ClusterBus& operator=(const ClusterBus&) = delete;

  // How this node's replication follows the cluster (the Server wires them to the
  // replica link): follow(ip, port) makes it a replica of that master, stop() makes it
  // a master keeping its data. Called on the bus thread. Set before Start().
  struct ReplicationHooks {
    std::function<void(const std::string& ip, int port)> follow;
    std::function<void()> stop;
  };
  void set_replication_hooks(ReplicationHooks h) { hooks_ = std::move(h); }

  // Starts the bus thread on these listening sockets (non-blocking; the bus owns them).
  // False with *error when its wake-up descriptor cannot be made.
  bool Start(std::vector<int> listen_fds, std::string* error);
  // Stops the thread and closes every socket.
  void Stop();
  // Makes the thread look at the nodes now rather than at its next tick (CLUSTER MEET).
  void Wake() const;
  void WakeThread() const;
  // Any worker: PUBLISH (shard: SPUBLISH) reaches the other nodes' subscribers, as in
  // Redis Cluster. Queued for the bus thread; while more than kMaxPublishQueueBytes
  // wait, more are dropped (counted, logged once per burst).
  void Propagate(bool shard, std::string_view channel, std::string_view message) const;
  static constexpr size_t kMaxPublishQueueBytes = 64 << 20;
  // What a queued PUBLISH counts beyond its channel and message: the entry and the bus
  // header it becomes, so that empty messages are bounded too.
  static constexpr size_t kPublishEntryBytes = 2400;
  // Any worker: CLUSTER FAILOVER [FORCE|TAKEOVER], carried out by the bus thread at
  // once (ClusterGossip::ManualFailover).
  void RequestFailover(FailoverMode mode) const;
  uint64_t publishes_dropped() const { return pub_dropped_.load(std::memory_order_relaxed); }

  // CLUSTER LINKS: one entry per link, as of the last tick.
  struct LinkStat {
    bool outbound = false;
    std::string node;         // the node's id; empty while not known
    int64_t create_time = 0;  // wall-clock ms
    bool reading = true;
    bool writing = false;
    size_t send_buffer_allocated = 0;
    size_t send_buffer_used = 0;
  };
  std::vector<LinkStat> LinkStats() const;

  // Messages sent and received by type (bus::kTypeCount of each), for CLUSTER INFO.
  uint64_t sent(uint16_t type) const { return sent_[type].load(std::memory_order_relaxed); }
  uint64_t received(uint16_t type) const { return received_[type].load(std::memory_order_relaxed); }
  size_t links() const { return links_now_.load(std::memory_order_relaxed); }
  // Links closed for passing cluster-link-sendbuf-limit.
  uint64_t links_over_limit() const { return over_limit_.load(std::memory_order_relaxed); }

 private:
  struct Link;
  void Run();
  // Accepts what is waiting; false when accepting should pause (out of descriptors, or
  // maxclients links).
  bool Accept(int listen_fd);
  // Reads what the link has; false when the link is to be closed.
  bool ReadLink(Link& l);
  bool FlushLink(Link& l);
  void Handle(Link& l, const bus::Message& m);
  // Every ClusterGossip::kTickMs: the gossip's clock, then links matched to nodes.
  void Tick();
  void Connect(uint64_t serial, const std::string& ip, int cport);
  // A connect finished (or failed): the link's first message, or false to close it.
  bool FinishConnect(Link& l);
  // Queues what the gossip asked for; links to close are marked dead.
  void Apply(GossipEffects& fx, const std::vector<uint64_t>& broadcast_to);
  void Send(Link& l, const std::string& bytes);
  // Closes a link; an outbound one's node is no longer connected.
  void CloseLink(Link* l);
  GossipSettings Settings() const;
  // Sends what Propagate queued.
  void SendPublishes();
  // Hands what other nodes published to this node's subscribers, on a worker.
  void Deliver(std::vector<GossipEffects::Published>& published);
  void PublishStats();

  Engine* engine_;
  ClusterService* service_;
  std::vector<int> listen_fds_;
  int wake_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<Link*> link_list_;
  std::unordered_map<uint64_t, Link*> outbound_;  // by node serial
  ClusterGossip gossip_;
  ReplicationHooks hooks_;
  struct PendingPublish {
    bool shard;
    std::string channel;
    std::string message;
  };
  mutable std::atomic<int> failover_request_{0};  // 0 none, 1 FORCE, 2 TAKEOVER
  mutable std::atomic<bool> tick_now_{false};     // Wake(): a tick at once
  mutable std::mutex pub_mu_;
  mutable std::vector<PendingPublish> pub_queue_;  // under pub_mu_
  mutable size_t pub_bytes_ = 0;                   // under pub_mu_
  mutable bool pub_warned_ = false;                // under pub_mu_
  mutable std::atomic<uint64_t> pub_dropped_{0};
  mutable std::mutex stats_mu_;
  std::vector<LinkStat> stats_;  // under stats_mu_
  std::atomic<uint64_t> sent_[bus::kTypeCount + 1] = {};
  std::atomic<uint64_t> received_[bus::kTypeCount + 1] = {};
  std::atomic<size_t> links_now_{0};
  std::atomic<uint64_t> over_limit_{0};
};

}  // namespace strata
