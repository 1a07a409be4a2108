// ClusterState: one node's view of a Redis Cluster - the nodes it knows, which master
// serves each of the 16384 hash slots, the epochs - and its text forms: nodes.conf
// (cluster-config-file) and CLUSTER NODES, which are the same lines
// (docs/ARCHITECTURE.md "Cluster").
//
// nodes.conf, as Redis 7.0 writes and reads it: one line per node,
//   <id> <ip>:<port>@<cport>[,<hostname>] <flags> <master id or -> <ping sent ms>
//   <pong received ms> <config epoch> <connected|disconnected> [<slot>|<a>-<b>]...
// flags a comma list of myself, master, slave, fail?, fail, handshake, noaddr,
// nofailover (or "noflags"); the myself line may also carry [<slot>->-<id>] (migrating
// to) and [<slot>-<-<id>] (importing from). Then one line
//   vars currentEpoch <n> lastVoteEpoch <n>
// A file that does not parse is refused whole, naming the line, as Redis refuses it.
//
// Pure data: no I/O, no clock (times are passed in), no threads. The cluster service
// (cluster_service.h) owns the one instance and serialises access to it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/key_slot.h"
#include "server/engine/cluster_routing.h"

namespace strata {

// Node flags: Redis's bits (the cluster bus carries them as they are).
enum ClusterNodeFlag : uint16_t {
  kNodeMaster = 1,
  kNodeReplica = 2,
  kNodePFail = 4,
  kNodeFail = 8,
  kNodeMyself = 16,
  kNodeHandshake = 32,
  kNodeNoAddr = 64,
  kNodeMeet = 128,
  kNodeMigrateTo = 256,
  kNodeNoFailover = 512,
};

// A master's report that a node is failing (PFAIL or FAIL in its gossip).
struct FailReport {
  std::string from;  // the reporting master's id
  int64_t time_ms = 0;
};

// A number no other node of this process had: the bus keys its links by it, as a
// node's id changes when its handshake ends.
uint64_t NextNodeSerial();

struct ClusterNode {
  std::string id;  // 40 characters of [0-9a-z]
  std::string ip;  // empty until known
  int port = 0;
  int cport = 0;  // the bus port
  std::string hostname;
  uint16_t flags = 0;
  std::string master_id;  // a replica's master; empty otherwise
  int64_t ping_sent_ms = 0;
  int64_t pong_received_ms = 0;
  uint64_t config_epoch = 0;
  bool connected = false;  // the bus link (myself: always)
  // Known only while the process runs (not in nodes.conf); times in ms, as ping_sent_ms.
  uint64_t serial = NextNodeSerial();
  int64_t ctime_ms = 0;          // when it was added (a handshake times out)
  int64_t link_ctime_ms = 0;     // when this node's link to it was last connected
  int64_t data_received_ms = 0;  // when a message from it last arrived
  int64_t fail_time_ms = 0;      // when it was marked FAIL
  int64_t orphaned_ms = 0;       // a master with no working replica: since when (0: not)
  uint64_t repl_offset = 0;
  std::vector<FailReport> fail_reports;

  bool is_master() const { return flags & kNodeMaster; }
  bool failed() const { return flags & kNodeFail; }
};

class ClusterState {
 public:
  static constexpr size_t kIdLen = 40;

  // A node alone in its cluster: a master with this id and no slots, epochs 0.
  explicit ClusterState(std::string my_id);

  // Reads nodes.conf text. False with *error naming the line when it does not parse or
  // names no node as myself.
  static bool Parse(std::string_view text, std::unique_ptr<ClusterState>* out, std::string* error);
  // nodes.conf text (Parse(Serialize()) gives this state back).
  std::string Serialize() const;
  // CLUSTER NODES: the same lines without the vars line, and with the nodes still in
  // their handshake (which nodes.conf leaves out). my_ip: the address to give for myself
  // while it has none of its own yet (the one the asking client reached).
  std::string NodesText(std::string_view my_ip = {}, bool with_handshakes = true) const;
  // One node's line, without its newline.
  std::string NodeLine(const ClusterNode& n, std::string_view my_ip = {}) const;

  ClusterNode& myself() { return *nodes_[myself_]; }
  const ClusterNode& myself() const { return *nodes_[myself_]; }
  const std::vector<std::unique_ptr<ClusterNode>>& nodes() const { return nodes_; }
  const ClusterNode* FindNode(std::string_view id) const;
  ClusterNode* FindNode(std::string_view id) {
    return const_cast<ClusterNode*>(std::as_const(*this).FindNode(id));
  }
  ClusterNode* FindBySerial(uint64_t serial);
  // Adds a node (its id not known yet). Returns it.
  ClusterNode* AddNode(std::unique_ptr<ClusterNode> n);
  // Starts a handshake with the node at ip:port@cport, as CLUSTER MEET and gossip about
  // an unknown node do: adds it flagged handshake (and meet, so the first message is a
  // MEET) under the temporary id given. Null when a handshake with that address is
  // already going on. REQUIRES: ip is in normal form, ports in 1..65535.
  ClusterNode* StartHandshake(const std::string& ip, int port, int cport, int64_t now_ms,
                              std::string temp_id);
  // A node's id becomes the one it says it has (its handshake ended).
  void RenameNode(ClusterNode* n, std::string id) { n->id = std::move(id); }
  // Whether gossip may bring this node back (CLUSTER FORGET keeps it away for a minute).
  bool Blacklisted(std::string_view id, int64_t now_ms);
  void Blacklist(const std::string& id, int64_t until_ms) { blacklist_[id] = until_ms; }
  void SetOwner(uint32_t slot, const ClusterNode* n) { owner_[slot] = n; }
  // No slot migrating or importing any more (this node became a replica).
  void CloseAllSlots() {
    migrating_.clear();
    importing_.clear();
  }
  size_t SlotCount(const ClusterNode& n) const;

  // The master serving slot, or null.
  const ClusterNode* SlotOwner(uint32_t slot) const { return owner_[slot]; }
  // Slot ranges [first, last] served by n, ascending.
  std::vector<std::pair<uint32_t, uint32_t>> RangesOf(const ClusterNode& n) const;
  size_t SlotsAssigned() const;
  // Masters serving at least one slot (cluster_size).
  size_t ServingMasters() const;

  // Slot assignment to myself (ADDSLOTS) and removal (DELSLOTS, FLUSHSLOTS). REQUIRES:
  // the caller checked the slot's current owner as the command needs.
  void AssignToMyself(uint32_t slot) { owner_[slot] = nodes_[myself_].get(); }
  void Unassign(uint32_t slot) { owner_[slot] = nullptr; }

  uint64_t current_epoch() const { return current_epoch_; }
  uint64_t last_vote_epoch() const { return last_vote_epoch_; }
  void set_current_epoch(uint64_t e) { current_epoch_ = e; }
  // Migrating / importing slots (CLUSTER SETSLOT): slot -> the other node's id.
  const std::map<uint32_t, std::string>& migrating() const { return migrating_; }
  const std::map<uint32_t, std::string>& importing() const { return importing_; }
  void SetMigrating(uint32_t slot, const std::string& to) { migrating_[slot] = to; }
  void SetImporting(uint32_t slot, const std::string& from) { importing_[slot] = from; }
  void ClearMigrating(uint32_t slot) { migrating_.erase(slot); }
  void ClearImporting(uint32_t slot) { importing_.erase(slot); }

  // cluster_state, as Redis computes it: ok when (with full coverage required) every
  // slot is served by a master not marked failed, and a majority of the masters that
  // serve slots are reachable (not fail or fail?); so a node that serves nothing and
  // knows no one is down.
  bool Ok(bool require_full_coverage) const;
  // The data path's view (cluster_routing.h).
  std::shared_ptr<const SlotRouting> BuildRouting(bool require_full_coverage,
                                                  bool allow_reads_when_down) const;

  // Removes another node (CLUSTER FORGET, a handshake that timed out): its slots become
  // unassigned, replicas that followed it follow no one, and its reports about other
  // nodes go. REQUIRES: n is not myself.
  void Forget(const ClusterNode* n);
  // A master's replicas.
  std::vector<const ClusterNode*> ReplicasOf(const ClusterNode& master) const;
  // The largest config epoch any node has, or the current epoch if larger.
  uint64_t MaxEpoch() const;
  void set_last_vote_epoch(uint64_t e) { last_vote_epoch_ = e; }

  // Forgets every other node and every slot; with hard, also draws a new id (the caller
  // gives it) and sets the epochs to 0 (CLUSTER RESET).
  void Reset(bool hard, const std::string& new_id);

 private:
  ClusterState() = default;
  std::vector<std::unique_ptr<ClusterNode>> nodes_;
  size_t myself_ = 0;
  std::array<const ClusterNode*, kClusterSlots> owner_{};
  std::map<uint32_t, std::string> migrating_;
  std::map<uint32_t, std::string> importing_;
  uint64_t current_epoch_ = 0;
  uint64_t last_vote_epoch_ = 0;
  std::map<std::string, int64_t, std::less<>> blacklist_;  // id -> until (ms)
};

// A valid node id: 40 characters of [0-9a-z].
bool IsNodeId(std::string_view id);

}  // namespace strata
