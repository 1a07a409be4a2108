// ClusterGossip: what this node does with the cluster bus's messages and on the bus's
// clock, as redis-server 7.0 does it (docs/ARCHITECTURE.md "Cluster"; the bytes are in
// bus_message.h and docs/CLUSTER_BUS.md).
//
// Design
//   Pure logic over the ClusterState: no sockets, no clock, no locks. The bus thread
//   (cluster_bus.h) calls it with the cluster service's mutex held, passing the time
//   (wall-clock ms, as Redis's ping and pong times are, since they travel in gossip),
//   and carries out what it returns in GossipEffects: bytes to send on a link, links to
//   drop, and whether nodes.conf and the workers' routing must follow.
//   - Handshake. CLUSTER MEET adds the node flagged handshake under a temporary id; the
//     bus opens a link to it and sends a MEET. The PONG that comes back on that link
//     gives the node its real id and role. A MEET from an unknown node adds that node
//     the same way (flagged handshake, without the meet flag: this node opens its own
//     link to it and PINGs it); a PING from an unknown node only gets its PONG. A
//     handshake that has not ended in max(cluster-node-timeout, 1 s) is dropped. A node
//     named in the gossip of a known node, and not known here, is added under the id and
//     address the gossip gives (unless a CLUSTER FORGET of it is less than a minute
//     old), and linked to like any other.
//   - Every message from a known node updates it: the epochs (the current epoch only
//     grows; a node's config epoch only grows), its role and master, its address when a
//     PING comes from another one, and its slots: a slot moves to the sender when its
//     owner is unknown or has a lower config epoch than the sender's (unless this node
//     is importing it). A sender that claims a slot whose owner has a higher epoch gets
//     an UPDATE about that owner. Two masters with the same config epoch: the one whose
//     id is smaller takes a new epoch (each end checks the other's PINGs).
//   - Pings: on each tick (every 100 ms) a node whose last PONG is older than half the
//     node timeout gets a PING; and once a second, the one with the oldest PONG among
//     five drawn at random. Each PING, PONG and MEET carries gossip about a tenth of the
//     known nodes (at least 3, at most all others but the receiver's own entry), and
//     about every node this one sees as failing.
//   - Failure detection. A node that has not answered a PING for cluster-node-timeout
//     is PFAIL (fail?). Masters report it in their gossip; when the reports of a
//     majority of the masters serving slots (this one included, if a master) are fresh
//     (within twice the node timeout), it is FAIL, and a master that decides so
//     broadcasts FAIL. A FAIL message from a known node marks the node FAIL at once.
//     A PONG clears PFAIL; FAIL is cleared at once for a replica or a master without
//     slots, and for a master with slots after twice the node timeout.
//   - PUBLISH and PUBLISHSHARD from a known node are handed to this node's subscribers
//     (GossipEffects::published); this node's own go to every other node (a shard
//     channel's: to the nodes of its shard only), as Redis 7.0 sends them.
//   - A link whose node has not answered for half the timeout after the link has been
//     up for a whole timeout is dropped and opened again.
//
//   - Replicas. A replica's header carries its master's id, epoch and slots. When its
//     master is FAIL (and it is not cluster-replica-no-failover, and its data is not
//     older than cluster-replica-validity-factor allows), a replica waits 500-1000 ms
//     plus 1 s per replica of the same master with a greater offset, then takes a new
//     current epoch and asks every node for its vote (FAILOVER_AUTH_REQUEST). A master
//     that serves slots votes once per epoch, for a replica of a failed master, not
//     twice for one master within twice the node timeout, and only when no slot the
//     replica claims has an owner of a newer epoch (FAILOVER_AUTH_ACK). With the votes
//     of a majority of the masters serving slots, the replica takes its master's slots
//     under the election's epoch, stops replicating and tells everyone (a PONG to all).
//     An election not won within max(2 x node timeout, 2 s) is tried again after twice
//     that. A master whose last slot goes to another master (its replica won, say)
//     becomes that master's replica, as does a replica whose master lost them all.
//
//   - CLUSTER FAILOVER FORCE starts an election at once, asking for votes although the
//     master is up (FORCEACK); TAKEOVER takes a new epoch and the slots with no vote.
//     The plain form sends MFSTART to the master, which pauses its clients' writes
//     (twice the manual failover's 5 s at most) and flags its PINGs PAUSED with the
//     offset its stream stopped at; once the replica has processed that offset, the
//     election runs as FORCE's. The master lets its clients go on once it follows the
//     winner, or when the 5 s are over.
//   - Slots lost to a newer epoch while this master held keys in them are reported
//     (dirty_slots) for the keys to be deleted.
//
//   - Replica migration (cluster-migration-barrier, cluster-allow-replica-migration).
//     A master that has had a replica (kNodeMigrateTo: a replica was seen following it,
//     or it was a replica itself and took over) and serves slots, but has no replica left
//     that is not FAIL, is orphaned. Among the replicas of the masters with the most
//     working replicas (at least two), the one with the smallest id moves to an orphaned
//     master, when its own master keeps more than the barrier's count of replicas that
//     are neither FAIL nor PFAIL, the cluster is ok, and the master has been orphaned for
//     kReplicaMigrationDelayMs (its own replicas may be about to say they follow it).
//
// Thread-safety: one instance, called only by the bus thread, under the cluster
// service's mutex.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/cluster/bus_message.h"
#include "server/cluster/cluster_state.h"

namespace strata {

// The link a message came on.
struct LinkInfo {
  bool outbound = false;     // opened by this node, to node_serial
  uint64_t node_serial = 0;  // outbound only
  std::string peer_ip;       // the other end's address
  std::string local_ip;      // this end's (the address the peer reached)
};

struct GossipSettings {
  int64_t node_timeout_ms = 15000;
  bool require_full_coverage = true;
  std::string announce_ip;  // cluster-announce-ip (the header's address), or empty
  uint64_t repl_offset = 0;
  // A replica's failover (cluster-replica-*, repl-ping-replica-period).
  bool replica_no_failover = false;
  int64_t replica_validity_factor = 10;
  int64_t repl_ping_period_s = 10;
  int64_t master_link_down_ms = 0;  // how long the master link has been down (0: up)
  bool allow_replica_migration = true;
  int64_t migration_barrier = 1;  // cluster-migration-barrier
};

struct GossipEffects {
  std::string reply;                                    // on the link the message came on
  std::vector<std::pair<uint64_t, std::string>> sends;  // on the link to the node (serial)
  std::vector<std::string> broadcasts;                  // on every connected link to a known node
  std::vector<uint64_t> drop_links;                     // links to these nodes (serials) to close
  bool close_link = false;                              // close the link the message came on
  bool save = false;                                    // nodes.conf changed
  bool routing = false;               // slots or the cluster's state may have changed
  std::vector<uint32_t> dirty_slots;  // slots this node lost while holding keys in them
  // PUBLISH and PUBLISHSHARD from known nodes, for this node's subscribers.
  struct Published {
    bool shard = false;
    std::string channel;
    std::string message;
  };
  std::vector<Published> published;
  // This node's replication follows the cluster: it now replicates master_ip:master_port
  // (CLUSTER REPLICATE, or its slots went to another master), or it won a failover and
  // is a master (its replication stops; the data stays).
  bool replicate = false;
  std::string master_ip;
  int master_port = 0;
  bool become_master = false;
  // A replica's manual failover: this master pauses its clients' writes until then (a
  // wall-clock ms; 0: no), or the pause ends.
  int64_t pause_writes_until_ms = 0;
  bool unpause_clients = false;
};

// CLUSTER FAILOVER's forms.
enum class FailoverMode : uint8_t { kDefault, kForce, kTakeover };

class ClusterGossip {
 public:
  static constexpr int64_t kFailReportValidityMult = 2;
  static constexpr int64_t kFailUndoTimeMult = 2;
  static constexpr int64_t kTickMs = 100;
  static constexpr int kRandomPingEveryTicks = 10;
  static constexpr int64_t kForgetBlacklistMs = 60000;
  static constexpr int64_t kReplicaMigrationDelayMs = 5000;

  explicit ClusterGossip(uint64_t seed) : rng_(seed) {}

  void OnMessage(ClusterState& st, const bus::Message& m, const LinkInfo& link,
                 const GossipSettings& s, int64_t now_ms, GossipEffects* fx);
  // Every kTickMs.
  void OnTick(ClusterState& st, const GossipSettings& s, int64_t now_ms, GossipEffects* fx);
  // A link to n is being opened (its connect has started): n is not connected, and
  // the link's age counts from now, as Redis's link ctime.
  // Its PING counts as sent from now, as Redis queues it on the new link.
  static void OnConnecting(ClusterNode& n, int64_t now_ms) {
    n.connected = false;
    n.link_ctime_ms = now_ms;
    if (n.ping_sent_ms == 0 && !(n.flags & kNodeMeet)) n.ping_sent_ms = now_ms;
  }
  // The first message on a new link to n: a MEET when n is to be met (the flag is then
  // cleared), else a PING.
  std::string OnLinkConnected(ClusterState& st, ClusterNode& n, const GossipSettings& s,
                              int64_t now_ms);
  // A link to n could not be made: n counts as pinged, so it can be found failing.
  void OnConnectFailed(ClusterNode& n, int64_t now_ms);

  // A PING, PONG or MEET from this node, with gossip.
  std::string BuildPing(const ClusterState& st, uint16_t type, const GossipSettings& s);
  // Where this node's PUBLISH goes (every other known node with a link up), or its
  // PUBLISHSHARD (the other nodes of its shard: its master and replicas).
  static std::vector<uint64_t> PublishTargets(const ClusterState& st, bool shard);
  // This node becomes a replica of master: its flags, its master, no open slots; the
  // effects say to replicate it. REQUIRES: master is another node, a master.
  static void SetMyMaster(ClusterState& st, const ClusterNode& master, GossipEffects* fx);
  // CLUSTER FAILOVER: the plain form (MFSTART to the master, which pauses its clients'
  // writes and sends the offset its stream stopped at; once this replica has processed
  // it all, an election as FORCE's), FORCE (an election now, votes asked for although
  // the master is up) - each for at most kManualFailoverTimeoutMs - or TAKEOVER (no
  // election: a new epoch and the master's slots at once). REQUIRES: this node is a
  // replica of a known master.
  void ManualFailover(ClusterState& st, FailoverMode mode, const GossipSettings& s, int64_t now_ms,
                      GossipEffects* fx);
  static constexpr int64_t kManualFailoverTimeoutMs = 5000;
  // This node's header for a message of this type.
  static bus::Header MyHeader(const ClusterState& st, uint16_t type, const GossipSettings& s);
  // A temporary id for a node in its handshake.
  std::string RandomId();

 private:
  void Ping(ClusterState& st, ClusterNode& n, const GossipSettings& s, int64_t now_ms,
            GossipEffects* fx);
  static std::string BuildFail(const ClusterState& st, const ClusterNode& n,
                               const GossipSettings& s);
  static std::string BuildUpdate(const ClusterState& st, const ClusterNode& n,
                                 const GossipSettings& s);
  void ProcessGossip(ClusterState& st, const bus::Message& m, ClusterNode* sender,
                     const GossipSettings& s, int64_t now_ms, GossipEffects* fx);
  void MarkFailingIfNeeded(ClusterState& st, ClusterNode& n, const GossipSettings& s,
                           int64_t now_ms, GossipEffects* fx);
  void ClearFailureIfNeeded(ClusterState& st, ClusterNode& n, const GossipSettings& s,
                            int64_t now_ms, GossipEffects* fx);
  void UpdateSlots(ClusterState& st, ClusterNode& sender, uint64_t sender_epoch,
                   const bus::SlotBitmap& slots, GossipEffects* fx);
  void UpdateAddress(ClusterState& st, ClusterNode& n, const LinkInfo& link, const bus::Header& h,
                     GossipEffects* fx);

  // A replica's failover of its failed master (on each tick).
  void HandleReplicaFailover(ClusterState& st, const GossipSettings& s, int64_t now_ms,
                             GossipEffects* fx);
  void ResetManualFailover();
  // A replica's move to an orphaned master (on each tick).
  void HandleReplicaMigration(ClusterState& st, const GossipSettings& s, int64_t now_ms,
                              GossipEffects* fx);
  // A master's side of a manual failover: over (it is a replica now) or timed out, its
  // clients go on.
  void MasterManualFailoverTick(ClusterState& st, const GossipSettings& s, int64_t now_ms,
                                GossipEffects* fx);
  // The replica's promotion: its master's slots, a master's role, a PONG to everyone.
  void ReplaceMyMaster(ClusterState& st, ClusterNode& master, const GossipSettings& s,
                       GossipEffects* fx);
  // This replica's rank among its master's: how many have a greater offset.
  int ReplicaRank(const ClusterState& st, const GossipSettings& s) const;
  // A master's vote for a replica that asks to fail its master over.
  void MaybeVote(ClusterState& st, ClusterNode& replica, const bus::Message& m,
                 const GossipSettings& s, int64_t now_ms, GossipEffects* fx);

  std::mt19937_64 rng_;
  uint64_t ticks_ = 0;
  bool allow_replica_migration_ = true;  // the last settings'
  // The election this replica runs (Redis's failover_auth_*).
  int64_t auth_time_ = 0;  // when it starts (or started); 0: none
  int auth_count_ = 0;     // votes received
  bool auth_sent_ = false;
  int auth_rank_ = 0;
  uint64_t auth_epoch_ = 0;
  bool cant_failover_logged_ = false;
  int64_t manual_until_ = 0;       // a manual failover's end (0: none)
  bool mf_can_start_ = false;      // its election may start (FORCE, or the stream is in)
  int64_t mf_master_offset_ = -1;  // the paused master's offset (-1: not known yet)
  // A master paused for its replica's manual failover: until when, and which replica.
  int64_t mf_end_ = 0;
  std::string mf_replica_;
  bool mf_ping_pending_ = false;  // the PAUSED PING goes at the next tick
  // This node's role and config epoch as last told to every node: a change (CLUSTER
  // REPLICATE, a failover, SETSLOT NODE of an imported slot) is sent to all at the next
  // tick, not left to the next PINGs.
  std::string announced_master_;
  uint64_t announced_epoch_ = 0;
  bool announced_ = false;
  // When this master last voted for a replica of each master (by id).
  std::map<std::string, int64_t> voted_time_;
};

}  // namespace strata
