#include "server/cluster/cluster_gossip.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "server/cluster/bus_message.h"
#include "tests/unit/scaled.h"

namespace strata {
namespace {

// Several nodes' gossip wired together in memory, on one clock: what a node sends on its
// link to another is decoded and handed to the other as an inbound message, and the
// reply comes back on the link. A node that is down drops what it is sent, and links to
// it cannot be made.
class Sim {
 public:
  struct Node {
    std::unique_ptr<ClusterState> st;
    std::unique_ptr<ClusterGossip> g;
    bool up = true;
    std::map<uint64_t, bool> links;  // serial of the node linked to -> connected
    int64_t paused_until = 0;        // a manual failover paused this master's writes
    bool unpaused = false;           // and the pause ended
  };

  explicit Sim(int64_t node_timeout_ms) { s_.node_timeout_ms = node_timeout_ms; }

  Node& Add(char id_char, int port, uint64_t config_epoch, uint32_t first, uint32_t last) {
    auto n = std::make_unique<Node>();
    n->st = std::make_unique<ClusterState>(std::string(40, id_char));
    n->g = std::make_unique<ClusterGossip>(nodes_.size() + 7);
    ClusterNode& me = n->st->myself();
    me.ip = "127.0.0.1";
    me.port = port;
    me.cport = port + 10000;
    me.config_epoch = config_epoch;
    n->st->set_current_epoch(config_epoch);  // as CLUSTER SET-CONFIG-EPOCH sets both
    for (uint32_t s = first; s <= last && first <= last; s++) n->st->AssignToMyself(s);
    nodes_.push_back(std::move(n));
    return *nodes_.back();
  }

  Node* ByCport(int cport) {
    for (auto& n : nodes_) {
      if (n->st->myself().cport == cport) return n.get();
    }
    return nullptr;
  }

  // One message from `from` to the node behind its link `serial`; the reply comes back.
  void Deliver(Node& from, uint64_t serial, const std::string& bytes) {
    ClusterNode* to_node = from.st->FindBySerial(serial);
    if (to_node == nullptr) return;
    Node* to = ByCport(to_node->cport);
    if (to == nullptr || !to->up || !from.up) return;
    bus::Message m;
    std::string why;
    ASSERT_TRUE(bus::Decode(bytes, &m, &why)) << why;
    LinkInfo in;
    in.peer_ip = "127.0.0.1";
    in.local_ip = "127.0.0.1";
    GossipEffects fx;
    to->g->OnMessage(*to->st, m, in, s_, now_, &fx);
    Apply(*to, fx);
    if (fx.reply.empty()) return;
    bus::Message r;
    ASSERT_TRUE(bus::Decode(fx.reply, &r, &why)) << why;
    LinkInfo out;
    out.outbound = true;
    out.node_serial = serial;
    out.peer_ip = "127.0.0.1";
    out.local_ip = "127.0.0.1";
    GossipEffects back;
    from.g->OnMessage(*from.st, r, out, s_, now_, &back);
    if (back.close_link) from.links.erase(serial);
    Apply(from, back);
  }

  void Apply(Node& n, GossipEffects& fx) {
    if (fx.pause_writes_until_ms != 0) n.paused_until = fx.pause_writes_until_ms;
    if (fx.unpause_clients) n.unpaused = true;
    for (uint64_t serial : fx.drop_links) {
      n.links.erase(serial);
      if (ClusterNode* c = n.st->FindBySerial(serial)) c->connected = false;
    }
    for (auto& [serial, bytes] : fx.sends) queue_.push_back({&n, serial, bytes});
    for (const std::string& bytes : fx.broadcasts) {
      for (const auto& c : n.st->nodes()) {
        if (c->connected && c.get() != &n.st->myself()) queue_.push_back({&n, c->serial, bytes});
      }
    }
  }

  // One tick of every node that is up: its clock, then its links matched to its nodes.
  void Tick() {
    now_ += ClusterGossip::kTickMs;
    for (auto& n : nodes_) {
      if (!n->up) continue;
      GossipEffects fx;
      n->g->OnTick(*n->st, s_, now_, &fx);
      Apply(*n, fx);
      std::vector<uint64_t> connect;
      for (const auto& c : n->st->nodes()) {
        if (c.get() == &n->st->myself() || (c->flags & kNodeNoAddr) || c->ip.empty()) continue;
        if (!n->links.count(c->serial)) connect.push_back(c->serial);
      }
      for (uint64_t serial : connect) {
        ClusterNode* c = n->st->FindBySerial(serial);
        Node* target = ByCport(c->cport);
        if (target == nullptr || !target->up) {
          n->g->OnConnectFailed(*c, now_);
          continue;
        }
        n->links[serial] = true;
        std::string first = n->g->OnLinkConnected(*n->st, *c, s_, now_);
        queue_.push_back({n.get(), serial, first});
      }
    }
    while (!queue_.empty()) {
      Pending p = queue_.front();
      queue_.pop_front();
      if (!p.from->links.count(p.serial)) continue;
      Deliver(*p.from, p.serial, p.bytes);
    }
  }

  void Run(int64_t ms) {
    for (int64_t t = 0; t < ms; t += ClusterGossip::kTickMs) Tick();
  }

  void SetDown(Node& n) {
    n.up = false;
    // Its peers' links to it break.
    for (auto& other : nodes_) {
      for (const auto& c : other->st->nodes()) {
        if (c->id == n.st->myself().id) {
          other->links.erase(c->serial);
          c->connected = false;
        }
      }
    }
    n.links.clear();
  }

  // Whether every node up sees the same nodes (no handshakes) and the same slot owners.
  bool Agree() const {
    const ClusterState* first = nullptr;
    for (const auto& n : nodes_) {
      if (!n->up) continue;
      const ClusterState& st = *n->st;
      size_t known = 0;
      for (const auto& c : st.nodes()) known += !(c->flags & kNodeHandshake);
      if (known != nodes_.size() || st.nodes().size() != nodes_.size()) return false;
      if (first == nullptr) {
        first = &st;
        continue;
      }
      for (uint32_t s = 0; s < kClusterSlots; s++) {
        const ClusterNode* a = first->SlotOwner(s);
        const ClusterNode* b = st.SlotOwner(s);
        if ((a == nullptr) != (b == nullptr)) return false;
        if (a != nullptr && a->id != b->id) return false;
      }
    }
    return true;
  }

  int64_t now() const { return now_; }
  const GossipSettings& settings() const { return s_; }
  GossipSettings& mutable_settings() { return s_; }
  std::vector<std::unique_ptr<Node>>& nodes() { return nodes_; }

 private:
  struct Pending {
    Node* from;
    uint64_t serial;
    std::string bytes;
  };
  GossipSettings s_;
  int64_t now_ = 1'700'000'000'000;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::deque<Pending> queue_;
};

void Meet(Sim& sim, Sim::Node& from, const Sim::Node& to) {
  const ClusterNode& t = to.st->myself();
  ASSERT_NE(from.st->StartHandshake(t.ip, t.port, t.cport, sim.now(), std::string(40, 'z')),
            nullptr);
}

TEST(ClusterGossipTest, ThreeMastersMeetThroughOneAndAgreeOnTheSlots) {
  Sim sim(2000);
  Sim::Node& a = sim.Add('a', 7000, 1, 0, 5460);
  Sim::Node& b = sim.Add('b', 7001, 2, 5461, 10922);
  Sim::Node& c = sim.Add('c', 7002, 3, 10923, 16383);
  Meet(sim, b, a);
  Meet(sim, c, a);
  sim.Run(3000);
  ASSERT_TRUE(sim.Agree());
  for (auto& n : sim.nodes()) {
    EXPECT_TRUE(n->st->Ok(true)) << n->st->NodesText();
    EXPECT_EQ(n->st->ServingMasters(), 3u);
    EXPECT_EQ(n->st->current_epoch(), 3u);  // the greatest epoch spreads
    for (const auto& other : n->st->nodes()) EXPECT_TRUE(other->is_master());
  }
  EXPECT_EQ(a.st->SlotOwner(16383)->id, c.st->myself().id);
  EXPECT_EQ(c.st->SlotOwner(0)->id, a.st->myself().id);
  EXPECT_EQ(b.st->FindNode(c.st->myself().id)->port, 7002);  // learned from a's gossip
}

// The plain CLUSTER FAILOVER: MFSTART, the master pauses its writes and sends its offset
// flagged PAUSED, the replica (whose offset matches) wins an election with the masters'
// votes, and the old master follows it and lets its clients go on.
TEST(ClusterGossipTest, APlainManualFailoverPausesTheMasterAndSwapsTheRoles) {
  Sim sim(1000);
  Sim::Node& a = sim.Add('a', 7000, 1, 0, 5460);
  Sim::Node& b = sim.Add('b', 7001, 2, 5461, 10922);
  Sim::Node& c = sim.Add('c', 7002, 3, 10923, 16383);
  Sim::Node& r = sim.Add('r', 7003, 0, 1, 0);
  Meet(sim, b, a);
  Meet(sim, c, a);
  Meet(sim, r, a);
  sim.Run(3000);
  ASSERT_TRUE(sim.Agree());
  GossipEffects fx;
  ClusterGossip::SetMyMaster(*r.st, *r.st->FindNode(a.st->myself().id), &fx);
  sim.Run(1000);  // every node learns r is a's replica
  for (auto& n : sim.nodes()) {
    ASSERT_FALSE(n->st->FindNode(r.st->myself().id)->is_master()) << n->st->NodesText();
  }
  GossipEffects mf;
  r.g->ManualFailover(*r.st, FailoverMode::kDefault, sim.settings(), sim.now(), &mf);
  ASSERT_EQ(mf.sends.size(), 1u);  // MFSTART to the master
  sim.Apply(r, mf);
  sim.Run(3000);
  EXPECT_GT(a.paused_until, 0);
  EXPECT_TRUE(a.unpaused);
  EXPECT_TRUE(r.st->myself().is_master());
  EXPECT_EQ(r.st->SlotCount(r.st->myself()), 5461u);
  EXPECT_FALSE(a.st->myself().is_master());
  EXPECT_EQ(a.st->myself().master_id, r.st->myself().id);
  EXPECT_TRUE(sim.Agree());
}

// Replica migration: masters a, b and c; a has replicas p and q, b has r. r dies, and
// b is left orphaned: p (the smaller id of the master with the most replicas) moves to b
// once b has been orphaned for a while, unless the barrier or the setting says no.
// Returns the master each of p and q follows at the end.
std::pair<std::string, std::string> MigrationAfterAReplicaDies(int64_t barrier, bool allow) {
  Sim sim(1000);
  sim.mutable_settings().migration_barrier = barrier;
  sim.mutable_settings().allow_replica_migration = allow;
  Sim::Node& a = sim.Add('a', 7000, 1, 0, 5460);
  Sim::Node& b = sim.Add('b', 7001, 2, 5461, 10922);
  Sim::Node& c = sim.Add('c', 7002, 3, 10923, 16383);
  Sim::Node& p = sim.Add('p', 7003, 0, 1, 0);
  Sim::Node& q = sim.Add('q', 7004, 0, 1, 0);
  Sim::Node& r = sim.Add('r', 7005, 0, 1, 0);
  for (Sim::Node* n : {&b, &c, &p, &q, &r}) Meet(sim, *n, a);
  sim.Run(3000);
  EXPECT_TRUE(sim.Agree());
  for (auto [replica, master] : {std::pair{&p, &a}, std::pair{&q, &a}, std::pair{&r, &b}}) {
    GossipEffects fx;
    ClusterGossip::SetMyMaster(*replica->st, *replica->st->FindNode(master->st->myself().id), &fx);
  }
  sim.Run(2000);  // every node learns who follows whom
  for (auto& n : sim.nodes()) {
    EXPECT_EQ(n->st->FindNode(p.st->myself().id)->master_id, a.st->myself().id);
    EXPECT_EQ(n->st->FindNode(r.st->myself().id)->master_id, b.st->myself().id);
  }
  // Nobody moves while every master has a replica.
  EXPECT_EQ(p.st->myself().master_id, a.st->myself().id);
  sim.SetDown(r);
  // FAIL after the node timeout and the masters' reports; the move after the delay.
  sim.Run(3000 + ClusterGossip::kReplicaMigrationDelayMs + 1000);
  std::string p_master = p.st->myself().master_id;
  std::string q_master = q.st->myself().master_id;
  // Every node up agrees with the replicas about their masters.
  for (auto& n : sim.nodes()) {
    if (!n->up) continue;
    EXPECT_EQ(n->st->FindNode(p.st->myself().id)->master_id, p_master);
    EXPECT_EQ(n->st->FindNode(q.st->myself().id)->master_id, q_master);
  }
  return {p_master, q_master};
}

TEST(ClusterGossipTest, AReplicaMigratesToAMasterLeftWithoutOne) {
  std::string a(40, 'a'), b(40, 'b');
  EXPECT_EQ(MigrationAfterAReplicaDies(1, true), std::make_pair(b, a));
}

TEST(ClusterGossipTest, NoReplicaMigratesBelowTheBarrierOrWhenNotAllowed) {
  std::string a(40, 'a');
  EXPECT_EQ(MigrationAfterAReplicaDies(2, true), std::make_pair(a, a));
  EXPECT_EQ(MigrationAfterAReplicaDies(1, false), std::make_pair(a, a));
}

// A master whose replicas are known from nodes.conf may get a migrating replica too.
TEST(ClusterGossipTest, AMasterWithAReplicaInNodesConfMayBeMigratedTo) {
  std::unique_ptr<ClusterState> st;
  std::string error;
  std::string a(40, 'a'), b(40, 'b'), r(40, 'r');
  std::string text = a + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-8191\n" + b +
                     " 127.0.0.1:7001@17001 master - 0 0 2 connected 8192-16383\n" + r +
                     " 127.0.0.1:7002@17002 slave " + b + " 0 0 2 connected\n" +
                     "vars currentEpoch 2 lastVoteEpoch 0\n";
  ASSERT_TRUE(ClusterState::Parse(text, &st, &error)) << error;
  EXPECT_TRUE(st->FindNode(b)->flags & kNodeMigrateTo);
  EXPECT_FALSE(st->FindNode(a)->flags & kNodeMigrateTo);
  // Not a flag CLUSTER NODES shows.
  EXPECT_EQ(st->NodesText().find("migrate"), std::string::npos);
}

TEST(ClusterGossipTest, ADeadMasterIsFailedByAMajorityAndClearedWhenItReturns) {
  Sim sim(1000);
  Sim::Node& a = sim.Add('a', 7000, 1, 0, 5460);
  Sim::Node& b = sim.Add('b', 7001, 2, 5461, 10922);
  Sim::Node& c = sim.Add('c', 7002, 3, 10923, 16383);
  Meet(sim, b, a);
  Meet(sim, c, a);
  sim.Run(3000);
  ASSERT_TRUE(sim.Agree());
  sim.SetDown(c);
  std::string cid = c.st->myself().id;
  sim.Run(4000);
  for (Sim::Node* n : {&a, &b}) {
    const ClusterNode* seen = n->st->FindNode(cid);
    ASSERT_NE(seen, nullptr);
    EXPECT_TRUE(seen->flags & kNodeFail) << n->st->NodesText();
    EXPECT_FALSE(n->st->Ok(true));  // its slots are not served
    EXPECT_TRUE(n->st->Ok(false));  // but a majority of masters is reachable
  }
  c.up = true;
  // A master with slots keeps FAIL for twice the node timeout after it was set.
  sim.Run(4000);
  for (Sim::Node* n : {&a, &b}) {
    const ClusterNode* seen = n->st->FindNode(cid);
    EXPECT_FALSE(seen->flags & (kNodeFail | kNodePFail)) << n->st->NodesText();
    EXPECT_TRUE(n->st->Ok(true));
  }
}

TEST(ClusterGossipTest, AMinorityOfReportsLeavesTheNodeAtPfail) {
  Sim sim(1000);
  Sim::Node& a = sim.Add('a', 7000, 1, 0, 5460);
  Sim::Node& b = sim.Add('b', 7001, 2, 5461, 10922);
  Sim::Node& c = sim.Add('c', 7002, 3, 10923, 16383);
  Meet(sim, b, a);
  Meet(sim, c, a);
  sim.Run(3000);
  ASSERT_TRUE(sim.Agree());
  // b and c down: a alone (1 of 3 masters) cannot reach the quorum of 2.
  sim.SetDown(b);
  sim.SetDown(c);
  sim.Run(3000);
  const ClusterNode* seen = a.st->FindNode(c.st->myself().id);
  EXPECT_TRUE(seen->flags & kNodePFail);
  EXPECT_FALSE(seen->flags & kNodeFail);
  EXPECT_FALSE(a.st->Ok(false));  // a is in the minority
}

TEST(ClusterGossipTest, MastersWithOneConfigEpochEndWithDifferentOnes) {
  Sim sim(2000);
  Sim::Node& a = sim.Add('a', 7000, 0, 0, 8191);
  Sim::Node& b = sim.Add('b', 7001, 0, 8192, 16383);
  Meet(sim, a, b);
  sim.Run(2000);
  ASSERT_TRUE(sim.Agree());
  EXPECT_NE(a.st->myself().config_epoch, b.st->myself().config_epoch);
  // The node with the smaller id moved (Redis's rule), and both know the new epoch.
  EXPECT_EQ(b.st->myself().config_epoch, 0u);
  EXPECT_EQ(a.st->myself().config_epoch, 1u);
  EXPECT_EQ(b.st->current_epoch(), 1u);
}

TEST(ClusterGossipTest, ASlotClaimedWithANewerEpochMovesAndAStaleClaimGetsAnUpdate) {
  Sim sim(2000);
  Sim::Node& a = sim.Add('a', 7000, 1, 0, 8191);
  Sim::Node& b = sim.Add('b', 7001, 2, 8192, 16383);
  Meet(sim, a, b);
  sim.Run(2000);
  ASSERT_TRUE(sim.Agree());
  // b takes slot 0 with a newer epoch (as after a resharding's SETSLOT NODE and BUMPEPOCH).
  b.st->AssignToMyself(0);
  b.st->set_current_epoch(5);
  b.st->myself().config_epoch = 5;
  sim.Run(2000);
  EXPECT_EQ(a.st->SlotOwner(0)->id, b.st->myself().id);
  EXPECT_EQ(a.st->SlotCount(a.st->myself()), 8191u);
  // a still claims slot 0 in its own header until it learns; now it does not.
  ASSERT_TRUE(sim.Agree());
}

TEST(ClusterGossipTest, AHandshakeThatGetsNoAnswerIsDropped) {
  Sim sim(1000);
  Sim::Node& a = sim.Add('a', 7000, 1, 0, 16383);
  ASSERT_NE(a.st->StartHandshake("127.0.0.1", 7999, 17999, sim.now(), std::string(40, 'z')),
            nullptr);
  // A second MEET of the same address while the first is going on adds nothing.
  EXPECT_EQ(a.st->StartHandshake("127.0.0.1", 7999, 17999, sim.now(), std::string(40, 'y')),
            nullptr);
  EXPECT_EQ(a.st->nodes().size(), 2u);
  sim.Run(1500);
  EXPECT_EQ(a.st->nodes().size(), 1u);
}

TEST(ClusterGossipTest, AForgottenNodeIsNotLearnedBackFromGossipForAMinute) {
  Sim sim(2000);
  Sim::Node& a = sim.Add('a', 7000, 1, 0, 5460);
  Sim::Node& b = sim.Add('b', 7001, 2, 5461, 10922);
  Sim::Node& c = sim.Add('c', 7002, 3, 10923, 16383);
  Meet(sim, b, a);
  Meet(sim, c, a);
  sim.Run(3000);
  ASSERT_TRUE(sim.Agree());
  std::string cid = c.st->myself().id;
  sim.SetDown(c);
  const ClusterNode* n = a.st->FindNode(cid);
  a.st->Blacklist(cid, sim.now() + ClusterGossip::kForgetBlacklistMs);
  a.st->Forget(n);
  sim.Run(3000);  // b still gossips about c
  EXPECT_EQ(a.st->FindNode(cid), nullptr);
  EXPECT_NE(b.st->FindNode(cid), nullptr);
}

TEST(ClusterGossipTest, PingsCarryGossipAboutOtherNodesAndTheHostname) {
  Sim sim(2000);
  Sim::Node& a = sim.Add('a', 7000, 1, 0, 5460);
  Sim::Node& b = sim.Add('b', 7001, 2, 5461, 10922);
  Sim::Node& c = sim.Add('c', 7002, 3, 10923, 16383);
  a.st->myself().hostname = "a.example";
  Meet(sim, b, a);
  Meet(sim, c, a);
  sim.Run(3000);
  ASSERT_TRUE(sim.Agree());
  ClusterGossip g(1);
  bus::Message m;
  std::string why;
  ASSERT_TRUE(bus::Decode(g.BuildPing(*a.st, bus::kPing, sim.settings()), &m, &why)) << why;
  EXPECT_EQ(m.hostname, "a.example");
  ASSERT_EQ(m.gossip.size(), 1u);  // 3 nodes: wanted = min(max(0, 3), 3 - 2)
  EXPECT_NE(m.gossip[0].name, a.st->myself().id);
  EXPECT_EQ(b.st->FindNode(a.st->myself().id)->hostname, "a.example");
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// Messages made of random parts - known and unknown senders, any type, gossip about
// known, unknown and this node, random slots and epochs - never break the state: this
// node stays itself and a master, every slot's owner is a node it knows and not one in
// its handshake, and the routing builds.
TEST(ClusterGossipTest, RandomMessagesKeepTheStateWhole) {
  Sim sim(1000);
  Sim::Node& a = sim.Add('a', 7000, 1, 0, 5460);
  Sim::Node& b = sim.Add('b', 7001, 2, 5461, 10922);
  Sim::Node& c = sim.Add('c', 7002, 3, 10923, 16383);
  Meet(sim, b, a);
  Meet(sim, c, a);
  sim.Run(2000);
  ASSERT_TRUE(sim.Agree());
  std::mt19937_64 rng(42);
  std::vector<std::string> ids = {a.st->myself().id, b.st->myself().id, c.st->myself().id,
                                  std::string(40, 'd'), std::string(40, 'e')};
  ClusterGossip g(7);
  int64_t now = sim.now();
  for (int i = 0; i < test_scale::Steps(3000); i++) {
    bus::Message m;
    m.h.type = static_cast<uint16_t>(rng() % bus::kTypeCount);
    m.h.sender = ids[rng() % ids.size()];
    m.h.port = static_cast<uint16_t>(7000 + rng() % 5);
    m.h.cport = static_cast<uint16_t>(m.h.port + 10000);
    m.h.current_epoch = rng() % 8;
    m.h.config_epoch = rng() % 8;
    m.h.flags = static_cast<uint16_t>(rng() % 2 ? kNodeMaster : kNodeReplica);
    if (rng() % 4 == 0) m.h.master = ids[rng() % ids.size()];
    for (int s = 0; s < 20; s++) bus::SetSlot(&m.h.slots, static_cast<uint32_t>(rng() % 16384));
    int gossip = static_cast<int>(rng() % 4);
    for (int j = 0; j < gossip; j++) {
      bus::Gossip e;
      e.name = ids[rng() % ids.size()];
      e.ip = "127.0.0.1";
      e.port = static_cast<uint16_t>(7000 + rng() % 5);
      e.cport = static_cast<uint16_t>(e.port + 10000);
      e.flags = static_cast<uint16_t>(rng() % 1024);
      e.pong_received_s = static_cast<uint32_t>(now / 1000 - rng() % 10);
      m.gossip.push_back(e);
    }
    m.node = ids[rng() % ids.size()];
    m.update_epoch = rng() % 8;
    for (int s = 0; s < 20; s++)
      bus::SetSlot(&m.update_slots, static_cast<uint32_t>(rng() % 16384));
    // Through the codec, as the bus sees it.
    bus::Message got;
    std::string why;
    ASSERT_TRUE(bus::Decode(bus::Encode(m), &got, &why)) << why;
    LinkInfo link;
    link.outbound = rng() % 2 == 0;
    if (link.outbound) {
      const auto& nodes = a.st->nodes();
      link.node_serial = nodes[rng() % nodes.size()]->serial;
    }
    link.peer_ip = "127.0.0.1";
    link.local_ip = "127.0.0.1";
    GossipEffects fx;
    now += 37;
    g.OnMessage(*a.st, got, link, sim.settings(), now, &fx);
    if (i % 10 == 0) {
      GossipEffects tick;
      g.OnTick(*a.st, sim.settings(), now, &tick);
    }
    ASSERT_EQ(a.st->myself().id, ids[0]);
    ASSERT_TRUE(a.st->myself().is_master());
    for (uint32_t s = 0; s < kClusterSlots; s++) {
      const ClusterNode* o = a.st->SlotOwner(s);
      if (o == nullptr) continue;
      ASSERT_EQ(a.st->FindNode(o->id), o) << s;
      ASSERT_FALSE(o->flags & kNodeHandshake) << s;
    }
    ASSERT_NE(a.st->BuildRouting(true, false), nullptr);
    std::unique_ptr<ClusterState> back;
    ASSERT_TRUE(ClusterState::Parse(a.st->Serialize(), &back, &why)) << why;
  }
}

}  // namespace
}  // namespace strata
