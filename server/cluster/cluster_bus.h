// ClusterBus: this node's end of the Redis Cluster bus (cluster-enabled yes;
// docs/ARCHITECTURE.md "Cluster", docs/CLUSTER_BUS.md for the bytes).
//
// Design
//   One thread of its own serves the bus: it accepts connections on the bus port (the
//   Server opens the sockets, on the same addresses as the client port) and reads each
//   link's stream with the codec (bus_message.h). The workers never see the bus; what the
//   bus learns goes into the ClusterService's state under its mutex, like any layout
//   change, and what it answers is read from there.
//   - Framing: a wrong signature, or a length below the header's or above
//     cluster-bus-max-message-bytes, closes the link (as Redis closes it). A message that
//     does not hold together is dropped and the link stays. Either is logged, once per
//     link at warning level and at verbose level after, so a peer cannot flood the log.
//   - PING and MEET are answered with a PONG that describes this node: its id, ports,
//     epochs, flags, slots (a replica: its master's), its master, the cluster's state as
//     it sees it, its replication offset, and its hostname as an extension when
//     cluster-announce-hostname is set. A MEET, or any PING while this node has no
//     address of its own and none is announced, gives it the address the peer reached
//     (saved in nodes.conf), as Redis does.
//   - Bounded: a link whose unsent bytes pass cluster-link-sendbuf-limit (a peer that
//     sends and never reads) is closed; each link is read once per turn of the loop (a
//     streaming peer cannot starve the others); a link that sends no whole message for
//     cluster-node-timeout is closed; at most maxclients links are accepted, and
//     accepting pauses briefly when descriptors run out.
//   So a redis-server 7 node that meets this one (CLUSTER MEET) completes its handshake
//   and lists it as a connected master with its slots, and redirects clients to it.
//
// Not there yet: links this node opens itself (its own PINGs and MEETs, so it learns no
// other node from the bus), gossip sections, failure detection (PFAIL/FAIL), UPDATE,
// epochs' conflicts, failover, PUBLISH across nodes. Messages other than PING and MEET
// are read, counted and ignored.
//
// Thread-safety: Start() and Stop() on the main thread; the counters from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "server/cluster/bus_message.h"

namespace strata {

class ClusterService;
class Engine;

class ClusterBus {
 public:
  ClusterBus(Engine* engine, ClusterService* service);
  ~ClusterBus();  // Stop()
  ClusterBus(const ClusterBus&) = delete;
  ClusterBus& operator=(const ClusterBus&) = delete;

  // Starts the bus thread on these listening sockets (non-blocking; the bus owns them).
  // False with *error when its wake-up descriptor cannot be made.
  bool Start(std::vector<int> listen_fds, std::string* error);
  // Stops the thread and closes every socket.
  void Stop();

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
  std::string Pong();

  Engine* engine_;
  ClusterService* service_;
  std::vector<int> listen_fds_;
  int wake_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<Link*> link_list_;
  std::atomic<uint64_t> sent_[bus::kTypeCount + 1] = {};
  std::atomic<uint64_t> received_[bus::kTypeCount + 1] = {};
  std::atomic<size_t> links_now_{0};
  std::atomic<uint64_t> over_limit_{0};
};

}  // namespace strata
