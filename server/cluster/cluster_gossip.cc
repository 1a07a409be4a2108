#include "server/cluster/cluster_gossip.h"

#include <algorithm>

#include "server/base/log.h"

namespace strata {

namespace {

bool Pinging(uint16_t type) {
  return type == bus::kPing || type == bus::kPong || type == bus::kMeet;
}

// Drops reports older than the validity window.
void ExpireReports(ClusterNode& n, const GossipSettings& s, int64_t now_ms) {
  int64_t validity = s.node_timeout_ms * ClusterGossip::kFailReportValidityMult;
  std::erase_if(n.fail_reports, [&](const FailReport& r) { return now_ms - r.time_ms > validity; });
}

void SetMaster(ClusterState& st, ClusterNode& n, GossipEffects* fx) {
  if (n.is_master() && !(n.flags & kNodeReplica) && n.master_id.empty()) return;
  // A replica that takes over had a master with replicas: its replicas-to-be may migrate
  // to it (Redis's MIGRATE_TO).
  if ((n.flags & kNodeReplica) && &n != &st.myself()) n.flags |= kNodeMigrateTo;
  n.flags = static_cast<uint16_t>((n.flags & ~kNodeReplica) | kNodeMaster);
  n.master_id.clear();
  fx->save = fx->routing = true;
}

}  // namespace

std::string ClusterGossip::RandomId() {
  static const char kHex[] = "0123456789abcdef";
  std::string id(ClusterState::kIdLen, '0');
  for (char& c : id) c = kHex[rng_() % 16];
  return id;
}

bus::Header ClusterGossip::MyHeader(const ClusterState& st, uint16_t type,
                                    const GossipSettings& s) {
  bus::Header h;
  h.type = type;
  // As Redis: an address only when one is announced; else the peer takes the link's.
  if (s.announce_ip.size() < bus::kIpLen) h.ip = s.announce_ip;
  h.offset = s.repl_offset;
  const ClusterNode& me = st.myself();
  h.port = static_cast<uint16_t>(me.port);
  h.cport = static_cast<uint16_t>(me.cport);
  h.current_epoch = st.current_epoch();
  h.sender = me.id;
  h.flags = me.flags;
  h.state = st.Ok(s.require_full_coverage) ? 0 : 1;
  // A replica sends its master's epoch and slots.
  const ClusterNode* master = &me;
  if (!me.is_master() && !me.master_id.empty()) {
    h.master = me.master_id;
    if (const ClusterNode* mm = st.FindNode(me.master_id)) master = mm;
  }
  h.config_epoch = master->config_epoch;
  for (uint32_t slot = 0; slot < kClusterSlots; slot++) {
    if (st.SlotOwner(slot) == master) bus::SetSlot(&h.slots, slot);
  }
  return h;
}

std::string ClusterGossip::BuildPing(const ClusterState& st, uint16_t type,
                                     const GossipSettings& s) {
  bus::Message m;
  m.h = MyHeader(st, type, s);
  // A master whose clients are paused for its replica's manual failover says so, with
  // the offset its stream stopped at (the header's) - from the tick after the pause
  // began on.
  if (mf_end_ != 0 && !mf_ping_pending_ && st.myself().is_master()) m.h.mflags |= bus::kPaused;
  m.hostname = st.myself().hostname;
  const auto& nodes = st.nodes();
  // About a tenth of the nodes (at least 3), drawn at random, as Redis draws them: not
  // myself, not one in its handshake or without an address, not one that serves nothing
  // and has no link from here; then every node seen as failing.
  size_t total = nodes.size();
  size_t fresh = total >= 2 ? total - 2 : 0;
  size_t wanted = std::min(std::max<size_t>(total / 10, 3), fresh);
  std::vector<const ClusterNode*> chosen;
  auto add = [&](const ClusterNode& n) {
    bus::Gossip g;
    g.name = n.id;
    g.ping_sent_s = static_cast<uint32_t>(n.ping_sent_ms / 1000);
    g.pong_received_s = static_cast<uint32_t>(n.pong_received_ms / 1000);
    g.ip = n.ip.size() < bus::kIpLen ? n.ip : std::string();
    g.port = static_cast<uint16_t>(n.port);
    g.cport = static_cast<uint16_t>(n.cport);
    g.flags = n.flags;
    m.gossip.push_back(std::move(g));
    chosen.push_back(&n);
  };
  size_t tries = wanted * 3;
  while (fresh > 0 && chosen.size() < wanted && tries-- > 0) {
    const ClusterNode& n = *nodes[rng_() % total];
    if (&n == &st.myself() || (n.flags & kNodePFail)) continue;
    if ((n.flags & (kNodeHandshake | kNodeNoAddr)) || (!n.connected && st.SlotCount(n) == 0)) {
      fresh--;
      continue;
    }
    if (std::find(chosen.begin(), chosen.end(), &n) != chosen.end()) continue;
    add(n);
  }
  for (const auto& n : nodes) {
    if ((n->flags & kNodePFail) && !(n->flags & (kNodeHandshake | kNodeNoAddr))) add(*n);
  }
  return bus::Encode(m);
}

std::string ClusterGossip::BuildFail(const ClusterState& st, const ClusterNode& n,
                                     const GossipSettings& s) {
  bus::Message m;
  m.h = MyHeader(st, bus::kFail, s);
  m.node = n.id;
  return bus::Encode(m);
}

std::string ClusterGossip::BuildUpdate(const ClusterState& st, const ClusterNode& n,
                                       const GossipSettings& s) {
  bus::Message m;
  m.h = MyHeader(st, bus::kUpdate, s);
  m.node = n.id;
  m.update_epoch = n.config_epoch;
  for (uint32_t slot = 0; slot < kClusterSlots; slot++) {
    if (st.SlotOwner(slot) == &n) bus::SetSlot(&m.update_slots, slot);
  }
  return bus::Encode(m);
}

std::vector<uint64_t> ClusterGossip::PublishTargets(const ClusterState& st, bool shard) {
  const ClusterNode& me = st.myself();
  const std::string& master = me.is_master() ? me.id : me.master_id;
  std::vector<uint64_t> out;
  for (const auto& n : st.nodes()) {
    if (n.get() == &me || (n->flags & kNodeHandshake) || !n->connected) continue;
    if (shard && n->id != master && n->master_id != master) continue;
    out.push_back(n->serial);
  }
  return out;
}

void ClusterGossip::Ping(ClusterState& st, ClusterNode& n, const GossipSettings& s, int64_t now_ms,
                         GossipEffects* fx) {
  fx->sends.emplace_back(n.serial, BuildPing(st, bus::kPing, s));
  n.ping_sent_ms = now_ms;
}

void ClusterGossip::SetMyMaster(ClusterState& st, const ClusterNode& master, GossipEffects* fx) {
  ClusterNode& me = st.myself();
  if (ClusterNode* m = st.FindNode(master.id)) m->flags |= kNodeMigrateTo;
  me.flags = static_cast<uint16_t>((me.flags & ~(kNodeMaster | kNodeMigrateTo)) | kNodeReplica);
  me.master_id = master.id;
  st.CloseAllSlots();
  fx->replicate = true;
  fx->become_master = false;
  fx->master_ip = master.ip;
  fx->master_port = master.port;
  fx->save = fx->routing = true;
}

int ClusterGossip::ReplicaRank(const ClusterState& st, const GossipSettings& s) const {
  const ClusterNode& me = st.myself();
  int rank = 0;
  for (const auto& n : st.nodes()) {
    if (n.get() == &me || !(n->flags & kNodeReplica) || n->master_id != me.master_id) continue;
    if (n->flags & kNodeNoFailover) continue;
    if (n->repl_offset > s.repl_offset) rank++;
  }
  return rank;
}

void ClusterGossip::HandleReplicaFailover(ClusterState& st, const GossipSettings& s, int64_t now_ms,
                                          GossipEffects* fx) {
  ClusterNode& me = st.myself();
  if (me.is_master() || me.master_id.empty()) return;
  ClusterNode* master = st.FindNode(me.master_id);
  bool manual = manual_until_ > now_ms;
  if (manual_until_ != 0 && !manual) {
    LogWarning("Manual failover timed out.");
    ResetManualFailover();
  }
  if (manual && !mf_can_start_) {
    // The plain form: the election waits until this replica has processed its paused
    // master's whole stream (the offset the master sent with its PAUSED flag).
    if (mf_master_offset_ < 0 || s.repl_offset != static_cast<uint64_t>(mf_master_offset_)) return;
    mf_can_start_ = true;
    LogNotice("All master replication stream processed, manual failover can start.");
    auth_time_ = 0;  // a new election at once
  }
  if (master == nullptr || (!(master->flags & kNodeFail) && !manual) ||
      (s.replica_no_failover && !manual) || st.SlotCount(*master) == 0) {
    cant_failover_logged_ = false;
    return;
  }
  int64_t timeout = s.node_timeout_ms;
  // A replica whose data is too old does not take over on its own (unless the factor
  // is 0); a manual failover goes on.
  int64_t data_age = s.master_link_down_ms;
  if (data_age > timeout) data_age -= timeout;
  if (!manual && s.replica_validity_factor > 0 &&
      data_age > s.repl_ping_period_s * 1000 + timeout * s.replica_validity_factor) {
    if (!cant_failover_logged_) {
      LogWarning(
          "Currently unable to failover: Disconnected from master for longer than allowed. "
          "Please check the 'cluster-replica-validity-factor' configuration option.");
      cant_failover_logged_ = true;
    }
    return;
  }
  int64_t auth_timeout = std::max<int64_t>(timeout * 2, 2000);
  int64_t auth_retry = auth_timeout * 2;
  if (now_ms - auth_time_ > auth_retry) {
    // A new election, after a delay for the failure to be known everywhere, and one
    // second more per replica with a better offset.
    auth_time_ = now_ms + 500 + static_cast<int64_t>(rng_() % 500);
    auth_count_ = 0;
    auth_sent_ = false;
    auth_rank_ = ReplicaRank(st, s);
    auth_time_ += auth_rank_ * 1000;
    if (manual) {
      // Asked for: at once, whatever the rank.
      auth_time_ = now_ms;
      auth_rank_ = 0;
    }
    LogNotice("Start of election delayed for %lld milliseconds (rank #%d, offset %llu).",
              static_cast<long long>(auth_time_ - now_ms), auth_rank_,
              static_cast<unsigned long long>(s.repl_offset));
    // The other replicas of this master learn this one's offset now, so that their
    // ranks are right (Redis's PONG to the local replicas).
    std::string pong;
    for (const auto& n : st.nodes()) {
      if (n.get() == &me || !(n->flags & kNodeReplica) || n->master_id != me.master_id) continue;
      if (pong.empty()) pong = BuildPing(st, bus::kPong, s);
      fx->sends.emplace_back(n->serial, pong);
    }
    return;
  }
  if (!auth_sent_ && !manual) {
    int rank = ReplicaRank(st, s);
    if (rank > auth_rank_) {
      auth_time_ += (rank - auth_rank_) * 1000;
      auth_rank_ = rank;
    }
  }
  if (now_ms < auth_time_ || now_ms - auth_time_ > auth_timeout) return;
  if (!auth_sent_) {
    st.set_current_epoch(st.current_epoch() + 1);
    auth_epoch_ = st.current_epoch();
    LogNotice("Starting a failover election for epoch %llu.",
              static_cast<unsigned long long>(auth_epoch_));
    bus::Message m;
    m.h = MyHeader(st, bus::kAuthRequest, s);
    // A manual failover asks for votes although the master is up.
    if (manual) m.h.mflags |= bus::kForceAck;
    fx->broadcasts.push_back(bus::Encode(m));
    auth_sent_ = true;
    fx->save = true;
    return;
  }
  size_t needed = st.ServingMasters() / 2 + 1;
  if (static_cast<size_t>(auth_count_) < needed) return;
  LogNotice("Failover election won: I'm the new master.");
  if (me.config_epoch < auth_epoch_) {
    me.config_epoch = auth_epoch_;
    LogNotice("configEpoch set to %llu after successful failover",
              static_cast<unsigned long long>(me.config_epoch));
  }
  ReplaceMyMaster(st, *master, s, fx);
}

void ClusterGossip::ReplaceMyMaster(ClusterState& st, ClusterNode& master, const GossipSettings& s,
                                    GossipEffects* fx) {
  ClusterNode& me = st.myself();
  // The master's slots are this node's now; it stops replicating and tells everyone.
  for (uint32_t slot = 0; slot < kClusterSlots; slot++) {
    if (st.SlotOwner(slot) == &master) st.SetOwner(slot, &me);
  }
  me.flags = static_cast<uint16_t>((me.flags & ~kNodeReplica) | kNodeMaster);
  me.master_id.clear();
  fx->become_master = true;
  fx->replicate = false;
  fx->broadcasts.push_back(BuildPing(st, bus::kPong, s));
  fx->save = fx->routing = true;
  auth_time_ = 0;
  ResetManualFailover();
}

void ClusterGossip::HandleReplicaMigration(ClusterState& st, const GossipSettings& s,
                                           int64_t now_ms, GossipEffects* fx) {
  ClusterNode& me = st.myself();
  if (me.is_master() || me.master_id.empty() || !s.allow_replica_migration) return;
  // Each master's replicas: how many are not FAIL (and, for this node's master, neither
  // FAIL nor PFAIL), and the smallest id among all of them.
  struct Replicas {
    size_t ok = 0;
    size_t reachable = 0;
    const ClusterNode* smallest = nullptr;
  };
  std::map<std::string_view, Replicas> of;
  for (const auto& n : st.nodes()) {
    if (!(n->flags & kNodeReplica) || n->master_id.empty()) continue;
    Replicas& r = of[n->master_id];
    if (!n->failed()) r.ok++;
    if (!(n->flags & (kNodeFail | kNodePFail))) r.reachable++;
    if (r.smallest == nullptr || n->id < r.smallest->id) r.smallest = n.get();
  }
  auto ok_replicas = [&](const ClusterNode& m) {
    auto it = of.find(m.id);
    return it == of.end() ? size_t{0} : it->second.ok;
  };
  // As Redis's cron: the masters that are orphaned, the most working replicas any
  // master has, and how many this node's master has.
  size_t orphaned = 0, max_replicas = 0, mine = 0;
  for (const auto& n : st.nodes()) {
    if (!n->is_master() || n->failed()) continue;
    size_t ok = ok_replicas(*n);
    if (ok == 0 && st.SlotCount(*n) > 0 && (n->flags & kNodeMigrateTo)) orphaned++;
    max_replicas = std::max(max_replicas, ok);
    if (n->id == me.master_id) mine = ok;
  }
  // No master with two working replicas: nothing to spare.
  if (orphaned == 0 || max_replicas < 2 || mine != max_replicas) return;
  if (!st.Ok(s.require_full_coverage)) return;
  // This node's master keeps more than the barrier's count of replicas.
  auto it = of.find(me.master_id);
  size_t reachable = it == of.end() ? 0 : it->second.reachable;
  if (static_cast<int64_t>(reachable) <= s.migration_barrier) return;
  // The target: the first orphaned master serving slots. The candidate: the smallest id
  // among the replicas of the masters with the most working replicas.
  ClusterNode* target = nullptr;
  const ClusterNode* candidate = &me;
  for (const auto& n : st.nodes()) {
    size_t ok = n->is_master() ? ok_replicas(*n) : 0;
    bool is_orphaned = n->is_master() && !n->failed() && (n->flags & kNodeMigrateTo) && ok == 0;
    if (is_orphaned) {
      if (target == nullptr && st.SlotCount(*n) > 0) target = n.get();
      if (n->orphaned_ms == 0) n->orphaned_ms = now_ms;
    } else {
      n->orphaned_ms = 0;
    }
    if (n->is_master() && ok == max_replicas) {
      auto r = of.find(n->id);
      if (r != of.end() && r->second.smallest->id < candidate->id) candidate = r->second.smallest;
    }
  }
  if (target == nullptr || candidate != &me ||
      now_ms - target->orphaned_ms <= kReplicaMigrationDelayMs) {
    return;
  }
  LogNotice("Migrating to orphaned master %.40s", target->id.c_str());
  SetMyMaster(st, *target, fx);
}

void ClusterGossip::ResetManualFailover() {
  manual_until_ = 0;
  mf_can_start_ = false;
  mf_master_offset_ = -1;
}

void ClusterGossip::MasterManualFailoverTick(ClusterState& st, const GossipSettings& s,
                                             int64_t now_ms, GossipEffects* fx) {
  if (mf_end_ == 0) return;
  if (mf_ping_pending_ && st.myself().is_master()) {
    mf_ping_pending_ = false;
    if (const ClusterNode* r = st.FindNode(mf_replica_)) {
      fx->sends.emplace_back(r->serial, BuildPing(st, bus::kPing, s));
    }
  }
  // Over (the replica took the slots: this node follows it now) or timed out: the
  // clients go on.
  if (!st.myself().is_master() || now_ms > mf_end_) {
    if (now_ms > mf_end_) LogWarning("Manual failover timed out.");
    mf_end_ = 0;
    mf_replica_.clear();
    mf_ping_pending_ = false;
    fx->unpause_clients = true;
  }
}

void ClusterGossip::ManualFailover(ClusterState& st, FailoverMode mode, const GossipSettings& s,
                                   int64_t now_ms, GossipEffects* fx) {
  ClusterNode& me = st.myself();
  if (me.is_master() || me.master_id.empty()) return;
  ClusterNode* master = st.FindNode(me.master_id);
  if (master == nullptr) return;
  if (mode == FailoverMode::kTakeover) {
    // No votes: a new epoch of its own (as Redis bumps it without consensus), then the
    // master's slots.
    LogNotice("Taking over the master (user request).");
    if (me.config_epoch == 0 || me.config_epoch != st.MaxEpoch()) {
      st.set_current_epoch(st.current_epoch() + 1);
      me.config_epoch = st.current_epoch();
      LogNotice("New configEpoch set to %llu", static_cast<unsigned long long>(me.config_epoch));
    }
    ReplaceMyMaster(st, *master, s, fx);
    return;
  }
  ResetManualFailover();
  manual_until_ = now_ms + kManualFailoverTimeoutMs;
  if (mode == FailoverMode::kForce) {
    LogNotice("Forced failover user request accepted.");
    mf_can_start_ = true;
    auth_time_ = 0;  // a new election at once
    HandleReplicaFailover(st, s, now_ms, fx);
    return;
  }
  // The plain form: the master pauses its clients and sends the offset its stream
  // stopped at; the election starts once this replica has it all.
  LogNotice("Manual failover user request accepted.");
  bus::Message m;
  m.h = MyHeader(st, bus::kMfStart, s);
  fx->sends.emplace_back(master->serial, bus::Encode(m));
}

void ClusterGossip::MaybeVote(ClusterState& st, ClusterNode& replica, const bus::Message& m,
                              const GossipSettings& s, int64_t now_ms, GossipEffects* fx) {
  ClusterNode& me = st.myself();
  if (!me.is_master() || st.SlotCount(me) == 0) return;
  bool force = m.h.mflags & bus::kForceAck;
  const ClusterNode* master = st.FindNode(m.h.master.empty() ? replica.master_id : m.h.master);
  uint64_t req_epoch = m.h.current_epoch;
  uint64_t req_config_epoch = m.h.config_epoch;
  const char* id = replica.id.c_str();
  if (req_epoch < st.current_epoch()) {
    LogWarning("Failover auth denied to %.40s: reqEpoch (%llu) < curEpoch(%llu)", id,
               static_cast<unsigned long long>(req_epoch),
               static_cast<unsigned long long>(st.current_epoch()));
    return;
  }
  if (st.last_vote_epoch() == st.current_epoch()) {
    LogWarning("Failover auth denied to %.40s: already voted for epoch %llu", id,
               static_cast<unsigned long long>(st.current_epoch()));
    return;
  }
  if (replica.is_master() || master == nullptr || (!master->failed() && !force)) {
    LogWarning("Failover auth denied to %.40s: %s", id,
               replica.is_master() ? "it is a master node"
               : master == nullptr ? "I don't know its master"
                                   : "its master is up");
    return;
  }
  auto voted = voted_time_.find(master->id);
  if (voted != voted_time_.end() && now_ms - voted->second < s.node_timeout_ms * 2) {
    LogWarning(
        "Failover auth denied to %.40s: can't vote about this master before %lld "
        "milliseconds",
        id, static_cast<long long>(s.node_timeout_ms * 2 - (now_ms - voted->second)));
    return;
  }
  for (uint32_t slot = 0; slot < kClusterSlots; slot++) {
    if (!bus::SlotSet(m.h.slots, slot)) continue;
    const ClusterNode* owner = st.SlotOwner(slot);
    if (owner == nullptr || owner->config_epoch <= req_config_epoch) continue;
    LogWarning("Failover auth denied to %.40s: slot %u epoch (%llu) > reqEpoch (%llu)", id, slot,
               static_cast<unsigned long long>(owner->config_epoch),
               static_cast<unsigned long long>(req_config_epoch));
    return;
  }
  st.set_last_vote_epoch(st.current_epoch());
  voted_time_[master->id] = now_ms;
  bus::Message ack;
  ack.h = MyHeader(st, bus::kAuthAck, s);
  fx->sends.emplace_back(replica.serial, bus::Encode(ack));
  fx->save = true;
  LogNotice("Failover auth granted to %.40s for epoch %llu", id,
            static_cast<unsigned long long>(st.current_epoch()));
}

std::string ClusterGossip::OnLinkConnected(ClusterState& st, ClusterNode& n,
                                           const GossipSettings& s, int64_t now_ms) {
  n.connected = true;
  if (n.link_ctime_ms == 0) n.link_ctime_ms = now_ms;
  // The ping time of a node that was already waiting for an answer stays, so a node
  // whose links keep dropping is still found failing.
  int64_t old_ping_sent = n.ping_sent_ms;
  bool meet = n.flags & kNodeMeet;
  std::string msg = BuildPing(st, meet ? bus::kMeet : bus::kPing, s);
  if (!meet) n.ping_sent_ms = now_ms;
  if (old_ping_sent != 0) n.ping_sent_ms = old_ping_sent;
  n.flags = static_cast<uint16_t>(n.flags & ~kNodeMeet);
  return msg;
}

void ClusterGossip::OnConnectFailed(ClusterNode& n, int64_t now_ms) {
  n.connected = false;
  if (n.ping_sent_ms == 0) n.ping_sent_ms = now_ms;
}

void ClusterGossip::OnTick(ClusterState& st, const GossipSettings& s, int64_t now_ms,
                           GossipEffects* fx) {
  ticks_++;
  allow_replica_migration_ = s.allow_replica_migration;
  const ClusterNode& self = st.myself();
  if (announced_ &&
      (self.master_id != announced_master_ || self.config_epoch != announced_epoch_)) {
    fx->broadcasts.push_back(BuildPing(st, bus::kPong, s));
  }
  announced_ = true;
  announced_master_ = self.master_id;
  announced_epoch_ = self.config_epoch;
  MasterManualFailoverTick(st, s, now_ms, fx);
  HandleReplicaFailover(st, s, now_ms, fx);
  HandleReplicaMigration(st, s, now_ms, fx);
  int64_t timeout = s.node_timeout_ms;
  int64_t handshake_timeout = std::max<int64_t>(timeout, 1000);
  std::vector<ClusterNode*> nodes;
  for (const auto& n : st.nodes()) nodes.push_back(n.get());
  for (ClusterNode* n : nodes) {
    if ((n->flags & kNodeHandshake) && now_ms - n->ctime_ms > handshake_timeout) {
      LogVerbose("Cluster: the handshake with %s:%d timed out", n->ip.c_str(), n->port);
      fx->drop_links.push_back(n->serial);
      st.Forget(n);
      fx->routing = true;
    }
  }
  nodes.clear();
  for (const auto& n : st.nodes()) {
    if (n.get() != &st.myself()) nodes.push_back(n.get());
  }
  if (nodes.empty()) return;
  // Once a second, the node with the oldest PONG among five drawn at random.
  if (ticks_ % kRandomPingEveryTicks == 0) {
    ClusterNode* oldest = nullptr;
    for (int i = 0; i < 5; i++) {
      ClusterNode* n = nodes[rng_() % nodes.size()];
      if (!n->connected || n->ping_sent_ms != 0 || (n->flags & kNodeHandshake)) continue;
      if (oldest == nullptr || n->pong_received_ms < oldest->pong_received_ms) oldest = n;
    }
    if (oldest != nullptr) Ping(st, *oldest, s, now_ms, fx);
  }
  for (ClusterNode* n : nodes) {
    if (n->flags & (kNodeNoAddr | kNodeHandshake)) continue;
    if (n->connected && now_ms - n->link_ctime_ms > timeout && n->ping_sent_ms != 0 &&
        now_ms - n->ping_sent_ms > timeout / 2 && now_ms - n->data_received_ms > timeout / 2) {
      // Up for a whole timeout, and no answer for half of one: a new link may do better.
      fx->drop_links.push_back(n->serial);
    }
    if (n->connected && n->ping_sent_ms == 0 && now_ms - n->pong_received_ms > timeout / 2) {
      Ping(st, *n, s, now_ms, fx);
      continue;
    }
    if (n->ping_sent_ms == 0) continue;
    int64_t delay = std::min(now_ms - n->ping_sent_ms, now_ms - n->data_received_ms);
    if (delay > timeout && !(n->flags & (kNodePFail | kNodeFail))) {
      LogVerbose("*** NODE %.40s possibly failing", n->id.c_str());
      n->flags |= kNodePFail;
      fx->routing = true;
    }
  }
}

void ClusterGossip::OnMessage(ClusterState& st, const bus::Message& m, const LinkInfo& link,
                              const GossipSettings& s, int64_t now_ms, GossipEffects* fx) {
  uint16_t type = m.h.type;
  allow_replica_migration_ = s.allow_replica_migration;
  ClusterNode* sender = st.FindNode(m.h.sender);
  if (sender != nullptr && (sender->flags & kNodeHandshake)) sender = nullptr;
  if (sender == &st.myself()) return;  // a message from a node using this node's id
  if (sender != nullptr) {
    sender->data_received_ms = now_ms;
    if (m.h.current_epoch > st.current_epoch()) {
      st.set_current_epoch(m.h.current_epoch);
      fx->save = true;
    }
    if (m.h.config_epoch > sender->config_epoch) {
      sender->config_epoch = m.h.config_epoch;
      fx->save = true;
    }
    sender->repl_offset = m.h.offset;
  }
  ClusterNode* link_node = link.outbound ? st.FindBySerial(link.node_serial) : nullptr;
  ClusterNode& me = st.myself();

  if (type == bus::kPing || type == bus::kMeet) {
    // This node's own address, from the one the peer reached (unless announced).
    if ((type == bus::kMeet || me.ip.empty()) && s.announce_ip.empty() && !link.local_ip.empty() &&
        me.ip != link.local_ip) {
      me.ip = link.local_ip;
      LogNotice("IP address for this node updated to %s", me.ip.c_str());
      fx->save = fx->routing = true;
    }
    if (sender == nullptr && type == bus::kMeet && !m.h.sender.empty()) {
      auto n = std::make_unique<ClusterNode>();
      n->id = RandomId();
      n->flags = kNodeHandshake;
      n->ip = !m.h.ip.empty() ? m.h.ip : link.peer_ip;
      n->port = m.h.port;
      n->cport = m.h.cport;
      n->ctime_ms = now_ms;
      st.AddNode(std::move(n));
      fx->save = true;
      // The sender is trusted this far: its gossip may update nodes known here.
      ProcessGossip(st, m, nullptr, s, now_ms, fx);
    }
    fx->reply = BuildPing(st, bus::kPong, s);
  }

  if (Pinging(type)) {
    if (link_node != nullptr) {
      if (link_node->flags & kNodeHandshake) {
        if (sender != nullptr) {
          // Known already under its id: its address may have changed; the handshake
          // node goes with its link.
          LogVerbose("Handshake: we already know node %.40s, updating the address if needed.",
                     sender->id.c_str());
          UpdateAddress(st, *sender, link, m.h, fx);
          st.Forget(link_node);
          fx->close_link = true;
          fx->save = fx->routing = true;
          return;
        }
        if (!IsNodeId(m.h.sender) || st.Blacklisted(m.h.sender, now_ms)) {
          fx->close_link = true;
          return;
        }
        st.RenameNode(link_node, m.h.sender);
        link_node->flags =
            static_cast<uint16_t>((link_node->flags & ~(kNodeHandshake | kNodeMeet)) |
                                  (m.h.flags & (kNodeMaster | kNodeReplica)));
        LogVerbose("Handshake with node %.40s completed.", link_node->id.c_str());
        fx->save = fx->routing = true;
      } else if (link_node->id != m.h.sender) {
        // The address now answers with another id: that node is gone from there.
        LogVerbose("PONG contains mismatching sender ID. About node %.40s added %lld ms ago",
                   link_node->id.c_str(), static_cast<long long>(now_ms - link_node->ctime_ms));
        link_node->flags |= kNodeNoAddr;
        link_node->ip.clear();
        link_node->port = link_node->cport = 0;
        fx->close_link = true;
        fx->save = fx->routing = true;
        return;
      }
    }
    if (sender != nullptr && type == bus::kPing && !link.outbound) {
      UpdateAddress(st, *sender, link, m.h, fx);
    }
    if (link_node != nullptr && type == bus::kPong) {
      link_node->pong_received_ms = now_ms;
      link_node->ping_sent_ms = 0;
      if (link_node->flags & kNodePFail) {
        link_node->flags = static_cast<uint16_t>(link_node->flags & ~kNodePFail);
        fx->routing = true;
      } else if (link_node->flags & kNodeFail) {
        ClearFailureIfNeeded(st, *link_node, s, now_ms, fx);
      }
    }
    if (sender == nullptr) return;
    if ((m.h.mflags & bus::kPaused) && manual_until_ != 0 && !me.is_master() &&
        sender->id == me.master_id && mf_master_offset_ != static_cast<int64_t>(m.h.offset)) {
      // The paused master's stream ends here (each PAUSED message says it again, so a
      // write that slipped in before the pause is waited for too).
      mf_master_offset_ = static_cast<int64_t>(m.h.offset);
      LogNotice("Received replication offset for paused master manual failover: %lld",
                static_cast<long long>(mf_master_offset_));
    }
    // The sender's role.
    if (m.h.master.empty()) {
      SetMaster(st, *sender, fx);
    } else {
      if (sender->is_master()) {
        // A master that became a replica: its slots are no longer its own.
        for (uint32_t slot = 0; slot < kClusterSlots; slot++) {
          if (st.SlotOwner(slot) == sender) st.SetOwner(slot, nullptr);
        }
        sender->flags =
            static_cast<uint16_t>((sender->flags & ~(kNodeMaster | kNodeMigrateTo)) | kNodeReplica);
        fx->save = fx->routing = true;
      }
      if (sender->master_id != m.h.master) {
        sender->master_id = m.h.master;
        fx->save = true;
      }
      // A master seen with a replica may have a replica migrate to it later.
      if (ClusterNode* master = st.FindNode(sender->master_id);
          master != nullptr && master->is_master()) {
        master->flags |= kNodeMigrateTo;
      }
    }
    // Its slots (a replica's are its master's).
    ClusterNode* sender_master = sender->is_master() ? sender : st.FindNode(sender->master_id);
    bool dirty = false;
    if (sender_master != nullptr) {
      for (uint32_t slot = 0; slot < kClusterSlots && !dirty; slot++) {
        dirty = (st.SlotOwner(slot) == sender_master) != bus::SlotSet(m.h.slots, slot);
      }
    }
    if (sender->is_master() && dirty) UpdateSlots(st, *sender, m.h.config_epoch, m.h.slots, fx);
    if (dirty) {
      // A slot it claims with an older epoch than its owner's here: tell it.
      for (uint32_t slot = 0; slot < kClusterSlots; slot++) {
        if (!bus::SlotSet(m.h.slots, slot)) continue;
        const ClusterNode* owner = st.SlotOwner(slot);
        if (owner == nullptr || owner == sender) continue;
        if (owner->config_epoch > m.h.config_epoch) {
          LogVerbose(
              "Node %.40s has old slots configuration, sending an UPDATE message about %.40s",
              sender->id.c_str(), owner->id.c_str());
          fx->sends.emplace_back(sender->serial, BuildUpdate(st, *owner, s));
          break;
        }
      }
    }
    // Two masters with one config epoch: the one with the smaller id moves on.
    if (me.is_master() && sender->is_master() && sender->config_epoch == me.config_epoch &&
        sender->id > me.id) {
      st.set_current_epoch(st.current_epoch() + 1);
      me.config_epoch = st.current_epoch();
      LogWarning("WARNING: configEpoch collision with node %.40s. configEpoch set to %llu",
                 sender->id.c_str(), static_cast<unsigned long long>(me.config_epoch));
      fx->save = true;
    }
    ProcessGossip(st, m, sender, s, now_ms, fx);
    if (sender->hostname != m.hostname) {
      sender->hostname = m.hostname;
      fx->save = true;
    }
    return;
  }

  if (type == bus::kFail) {
    if (sender == nullptr) {
      LogVerbose("Ignoring FAIL message from unknown node %.40s about %.40s", m.h.sender.c_str(),
                 m.node.c_str());
      return;
    }
    ClusterNode* failing = st.FindNode(m.node);
    if (failing != nullptr && !(failing->flags & (kNodeFail | kNodeMyself))) {
      LogNotice("FAIL message received from %.40s about %.40s", sender->id.c_str(),
                failing->id.c_str());
      failing->flags = static_cast<uint16_t>((failing->flags | kNodeFail) & ~kNodePFail);
      failing->fail_time_ms = now_ms;
      fx->save = fx->routing = true;
    }
  } else if (type == bus::kMfStart) {
    // A replica of this master asks for a manual failover: clients' writes pause (twice
    // the failover's time at most), and the replica is told where the stream stopped.
    if (sender == nullptr || !me.is_master() || !(sender->flags & kNodeReplica) ||
        sender->master_id != me.id)
      return;
    LogNotice("Manual failover requested by replica %.40s.", sender->id.c_str());
    mf_end_ = now_ms + kManualFailoverTimeoutMs;
    mf_replica_ = sender->id;
    fx->pause_writes_until_ms = now_ms + kManualFailoverTimeoutMs * 2;
    // The PAUSED PING goes at the next tick, its offset read then: the writes already on
    // their way when the pause began are in it (a Redis replica takes the first offset
    // it is told).
    mf_ping_pending_ = true;
  } else if (type == bus::kAuthRequest) {
    if (sender != nullptr) MaybeVote(st, *sender, m, s, now_ms, fx);
  } else if (type == bus::kAuthAck) {
    // A vote counts from a master serving slots, for this election's epoch.
    if (sender != nullptr && sender->is_master() && st.SlotCount(*sender) > 0 &&
        m.h.current_epoch >= auth_epoch_ && auth_sent_) {
      auth_count_++;
      HandleReplicaFailover(st, s, now_ms, fx);
    }
  } else if (type == bus::kPublish || type == bus::kPublishShard) {
    if (sender == nullptr) return;  // not from a node of this cluster
    fx->published.push_back(
        GossipEffects::Published{type == bus::kPublishShard, m.channel, m.payload});
  } else if (type == bus::kUpdate) {
    if (sender == nullptr) return;
    ClusterNode* n = st.FindNode(m.node);
    if (n == nullptr || n->config_epoch >= m.update_epoch) return;
    if (n->flags & kNodeReplica) SetMaster(st, *n, fx);
    n->config_epoch = m.update_epoch;
    fx->save = true;
    UpdateSlots(st, *n, m.update_epoch, m.update_slots, fx);
  }
}

void ClusterGossip::ProcessGossip(ClusterState& st, const bus::Message& m, ClusterNode* sender,
                                  const GossipSettings& s, int64_t now_ms, GossipEffects* fx) {
  for (const bus::Gossip& g : m.gossip) {
    ClusterNode* n = st.FindNode(g.name);
    if (n != nullptr && !(n->flags & kNodeHandshake)) {
      if (sender != nullptr && sender->is_master() && n != &st.myself()) {
        auto it = std::find_if(n->fail_reports.begin(), n->fail_reports.end(),
                               [&](const FailReport& r) { return r.from == sender->id; });
        if (g.flags & (kNodeFail | kNodePFail)) {
          if (it == n->fail_reports.end()) {
            LogVerbose("Node %.40s reported node %.40s as not reachable.", sender->id.c_str(),
                       n->id.c_str());
            n->fail_reports.push_back(FailReport{sender->id, now_ms});
          } else {
            it->time_ms = now_ms;
          }
          MarkFailingIfNeeded(st, *n, s, now_ms, fx);
        } else if (it != n->fail_reports.end()) {
          LogVerbose("Node %.40s reported node %.40s is back online.", sender->id.c_str(),
                     n->id.c_str());
          n->fail_reports.erase(it);
        }
      }
      // Seen up by others, with no ping of ours waiting and no reports: their last PONG
      // from it counts here too (not one from the future).
      ExpireReports(*n, s, now_ms);
      if (!(g.flags & (kNodeFail | kNodePFail)) && n->ping_sent_ms == 0 &&
          n->fail_reports.empty()) {
        int64_t pong = static_cast<int64_t>(g.pong_received_s) * 1000;
        if (pong <= now_ms + 500 && pong > n->pong_received_ms) n->pong_received_ms = pong;
      }
      // A node failing here, seen up elsewhere at another address: it moved.
      if ((n->flags & (kNodeFail | kNodePFail)) && !(g.flags & kNodeNoAddr) &&
          !(g.flags & (kNodeFail | kNodePFail)) && !g.ip.empty() &&
          (n->ip != g.ip || n->port != g.port || n->cport != g.cport)) {
        fx->drop_links.push_back(n->serial);
        n->ip = g.ip;
        n->port = g.port;
        n->cport = g.cport;
        n->flags = static_cast<uint16_t>(n->flags & ~kNodeNoAddr);
        fx->save = fx->routing = true;
      }
    } else if (n == nullptr && sender != nullptr && !(g.flags & kNodeNoAddr) && IsNodeId(g.name) &&
               !g.ip.empty() && g.cport != 0 && !st.Blacklisted(g.name, now_ms)) {
      // Known to a node known here: added under its own id, as Redis 7.0 adds it.
      auto node = std::make_unique<ClusterNode>();
      node->id = g.name;
      node->flags = static_cast<uint16_t>(
          g.flags & ~(kNodeMyself | kNodeMeet | kNodeHandshake | kNodePFail | kNodeFail));
      node->ip = g.ip;
      node->port = g.port;
      node->cport = g.cport;
      node->ctime_ms = now_ms;
      st.AddNode(std::move(node));
      fx->save = fx->routing = true;
    }
  }
}

void ClusterGossip::MarkFailingIfNeeded(ClusterState& st, ClusterNode& n, const GossipSettings& s,
                                        int64_t now_ms, GossipEffects* fx) {
  if (!(n.flags & kNodePFail) || (n.flags & kNodeFail)) return;
  size_t needed = st.ServingMasters() / 2 + 1;
  ExpireReports(n, s, now_ms);
  size_t failures = n.fail_reports.size() + (st.myself().is_master() ? 1 : 0);
  if (failures < needed) return;
  LogNotice("Marking node %.40s as failing (quorum reached).", n.id.c_str());
  n.flags = static_cast<uint16_t>((n.flags & ~kNodePFail) | kNodeFail);
  n.fail_time_ms = now_ms;
  if (st.myself().is_master()) fx->broadcasts.push_back(BuildFail(st, n, s));
  fx->save = fx->routing = true;
}

void ClusterGossip::ClearFailureIfNeeded(ClusterState& st, ClusterNode& n, const GossipSettings& s,
                                         int64_t now_ms, GossipEffects* fx) {
  if (!(n.flags & kNodeFail)) return;
  if ((n.flags & kNodeReplica) || st.SlotCount(n) == 0) {
    LogNotice("Clear FAIL state for node %.40s: %s is reachable again.", n.id.c_str(),
              (n.flags & kNodeReplica) ? "replica" : "master without slots");
  } else if (now_ms - n.fail_time_ms > s.node_timeout_ms * kFailUndoTimeMult) {
    LogNotice(
        "Clear FAIL state for node %.40s: is reachable again and nobody is serving its slots "
        "after some time.",
        n.id.c_str());
  } else {
    return;
  }
  n.flags = static_cast<uint16_t>(n.flags & ~kNodeFail);
  fx->save = fx->routing = true;
}

void ClusterGossip::UpdateSlots(ClusterState& st, ClusterNode& sender, uint64_t sender_epoch,
                                const bus::SlotBitmap& slots, GossipEffects* fx) {
  ClusterNode& me = st.myself();
  if (&sender == &me) {
    LogVerbose("Discarding UPDATE message about myself.");
    return;
  }
  const ClusterNode* current = me.is_master() ? &me : st.FindNode(me.master_id);
  size_t claimed = 0;
  size_t taken_from_us = 0;
  for (uint32_t slot = 0; slot < kClusterSlots; slot++) {
    if (!bus::SlotSet(slots, slot)) continue;
    claimed++;
    const ClusterNode* owner = st.SlotOwner(slot);
    if (owner == &sender || st.importing().count(slot) != 0) continue;
    if (owner != nullptr && owner->config_epoch >= sender_epoch) continue;
    if (owner == &me) fx->dirty_slots.push_back(slot);
    if (owner != nullptr && owner == current) taken_from_us++;
    st.SetOwner(slot, &sender);
    fx->save = fx->routing = true;
  }
  if (taken_from_us > 0 && current != nullptr && st.SlotCount(*current) == 0 &&
      (allow_replica_migration_ || claimed == taken_from_us)) {
    // This shard's slots all went to the sender (its replica won a failover, say): this
    // node follows it, as Redis does.
    LogNotice("Configuration change detected. Reconfiguring myself as a replica of %.40s",
              sender.id.c_str());
    SetMyMaster(st, sender, fx);
  }
}

void ClusterGossip::UpdateAddress(ClusterState& st, ClusterNode& n, const LinkInfo& link,
                                  const bus::Header& h, GossipEffects* fx) {
  std::string ip = !h.ip.empty() ? h.ip : link.peer_ip;
  if (ip.empty() || (n.ip == ip && n.port == h.port && n.cport == h.cport)) return;
  n.ip = ip;
  n.port = h.port;
  n.cport = h.cport;
  n.flags = static_cast<uint16_t>(n.flags & ~kNodeNoAddr);
  fx->drop_links.push_back(n.serial);  // it goes to the old address
  LogNotice("Address updated for node %.40s, now %s:%d", n.id.c_str(), n.ip.c_str(), n.port);
  fx->save = fx->routing = true;
  const ClusterNode& me = st.myself();
  if (!me.is_master() && me.master_id == n.id) {
    // This node's master moved: its replication follows.
    fx->replicate = true;
    fx->master_ip = n.ip;
    fx->master_port = n.port;
  }
}

}  // namespace strata
